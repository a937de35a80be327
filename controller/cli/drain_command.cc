#include "controller/cli/drain_command.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/cli/commands.h"
#include "controller/report/report.h"
#include "controller/slurm/drain.h"

extern char** environ;

namespace gdrbench::controller::cli {
namespace {

// Runs argv (PATH lookup, no shell); the exit code, or -1 with errno's text
// in *why when it could not start or died by a signal.
int Spawn(const std::vector<std::string>& argv, std::string* why) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (rc != 0) {
    *why = absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *why = absl::StrCat(argv[0], " died by signal ", WTERMSIG(status));
  return -1;
}

}  // namespace

int DrainCommand(const DrainOptions& o) {
  auto policy = slurm::ParseDrainKinds(o.what, o.max_fraction);
  if (!policy.ok()) return PrintError(policy.status());
  auto run = report::LoadRunJson(o.run_file);
  if (!run.ok()) return PrintError(run.status());
  auto findings = slurm::FindNodesToDrain(*run, *policy);
  if (!findings.ok()) {
    return PrintError(absl::Status(findings.status().code(),
                                   absl::StrCat(o.run_file, ": ", findings.status().message())));
  }
  if (!o.check_node.empty()) {
    for (const auto& f : *findings) {
      if (f.node != o.check_node) continue;
      std::printf("%s\n", slurm::DrainReason(f, *run).c_str());
      return 1;
    }
    return 0;
  }
  if (findings->empty()) {
    std::printf("run %s: no node to drain\n", run->run_id().c_str());
    return 0;
  }
  if (auto st = slurm::CheckFraction(*run, *findings, *policy); !st.ok()) return PrintError(st);
  int failed = 0;
  for (const auto& f : *findings) {
    std::vector<std::string> argv = slurm::ScontrolDrainArgv(o.scontrol, f, *run);
    if (o.dry_run) {
      std::printf("%s\n", slurm::ShellQuote(argv).c_str());
      continue;
    }
    std::string why;
    int rc = Spawn(argv, &why);
    if (rc != 0) {
      ++failed;
      if (why.empty()) why = absl::StrCat(o.scontrol, " exited ", rc);
      std::fprintf(stderr, "gdrbench: drain %s: %s\n", f.node.c_str(), why.c_str());
      continue;
    }
    std::printf("drained %s: %s\n", f.node.c_str(), slurm::DrainReason(f, *run).c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace gdrbench::controller::cli
