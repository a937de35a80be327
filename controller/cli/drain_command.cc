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
#include "common/status.h"

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

// The run from the server: its header view (blame, excluded nodes, the
// matrices' node names; no pairs), which is all the drain reads.
absl::StatusOr<v1::Run> FetchRun(const DrainOptions& o) {
  ASSIGN_OR_RETURN(auto client, ServerClient::Create(o.server));
  std::string id = o.run_id;
  if (id == "latest") {
    v1::ListRunsRequest list;
    list.set_cluster(o.cluster);
    list.set_page_size(1);
    ASSIGN_OR_RETURN(v1::ListRunsResponse runs, client->ListRuns(list));
    if (runs.runs().empty()) {
      return absl::NotFoundError(absl::StrCat("no run on ", o.server.address,
                                              o.cluster.empty() ? "" : " for cluster " + o.cluster));
    }
    id = runs.runs(0).run_id();
  }
  v1::GetRunRequest get;
  get.set_run_id(id);
  get.set_view(v1::RUN_VIEW_HEADER);
  return client->GetRun(get);
}

}  // namespace

int DrainCommand(const DrainOptions& o) {
  auto policy = slurm::ParseDrainKinds(o.what, o.max_fraction);
  if (!policy.ok()) return PrintError(policy.status());
  if (o.run_file.empty() == o.server.address.empty()) {
    return PrintError(absl::InvalidArgumentError("give --run FILE or --server HOST:PORT [--run-id ID]"));
  }
  auto run = o.run_file.empty() ? FetchRun(o) : report::LoadRunJson(o.run_file);
  if (!run.ok()) return PrintError(run.status());
  const std::string source = o.run_file.empty() ? absl::StrCat("run ", run->run_id(), " on ", o.server.address)
                                                : o.run_file;
  auto findings = slurm::FindNodesToDrain(*run, *policy);
  if (!findings.ok()) {
    return PrintError(absl::Status(findings.status().code(),
                                   absl::StrCat(source, ": ", findings.status().message())));
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
