#include "controller/cli/slurm_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

extern char** environ;

namespace gdrbench::controller::cli {
namespace {

std::vector<char*> Args(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return args;
}

int Wait(pid_t pid, const std::string& name, std::string* why) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *why = absl::StrCat(name, " died by signal ", WTERMSIG(status));
  return -1;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

int SpawnWait(const std::vector<std::string>& argv, std::string* why) {
  std::vector<char*> args = Args(argv);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (rc != 0) {
    *why = absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc));
    return -1;
  }
  return Wait(pid, argv[0], why);
}

absl::StatusOr<std::string> CaptureStdout(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds limit) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  std::vector<char*> args = Args(argv);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    return absl::UnavailableError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc)));
  }
  // Both pipes are read as they fill (a command that writes much on stderr
  // must not block on it while stdout is read), until both end or the limit.
  std::string text, errors;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&text, &errors};
  bool timed_out = false;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        continue;
      }
      into[i]->append(buf, static_cast<size_t>(got));
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out) {
    kill(pid, SIGKILL);
    std::string ignored;
    Wait(pid, argv[0], &ignored);
    return absl::DeadlineExceededError(
        absl::StrCat(absl::StrJoin(argv, " "), ": no answer in ", limit.count() / 1000.0, " s (killed)"));
  }
  std::string why;
  int code = Wait(pid, argv[0], &why);
  if (code == 0) return text;
  if (why.empty()) why = absl::StrCat(argv[0], " exited ", code);
  std::string first = errors.substr(0, errors.find('\n'));
  return absl::UnavailableError(absl::StrCat(why, first.empty() ? "" : ": ", first));
}

slurm::SlurmIdentity WhoAmI(const std::string& scontrol, const std::string& sacctmgr) {
  slurm::SlurmIdentity id;
  id.uid = geteuid();
  if (const passwd* pw = getpwuid(id.uid); pw != nullptr) {
    id.user = pw->pw_name;
  } else {
    id.user = absl::StrCat("uid ", id.uid);
  }
  if (id.uid == 0) return id;
  // Each asked for at most 20 s: Slurm's commands retry for about a minute
  // when they cannot read slurm.conf (they look for a configless controller
  // in DNS), and sacctmgr waits on a slurmdbd that may not exist.
  constexpr auto kAsk = std::chrono::seconds(20);
  if (auto config = CaptureStdout({scontrol, "show", "config"}, kAsk); config.ok()) {
    id.slurm_user = slurm::ParseSlurmUser(*config);
    id.accounting_storage = slurm::ShowConfigValue(*config, "AccountingStorageType");
  } else {
    id.slurm_user_unknown_why = std::string(config.status().message());
  }
  // No accounting, no AdminLevel to ask sacctmgr for.
  if (id.accounting_storage == slurm::kNoAccounting) return id;
  if (auto level = CaptureStdout({sacctmgr, "-nP", "show", "user", id.user, "format=AdminLevel"}, kAsk);
      level.ok()) {
    id.admin_level = std::string(absl::StripAsciiWhitespace(*level));
  } else {
    id.admin_level_unknown_why = std::string(level.status().message());
  }
  return id;
}

}  // namespace gdrbench::controller::cli
