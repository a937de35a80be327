// Built without libarchive (the gpu preset on a machine without
// libarchive-dev): capture tarballs are not read at all (tar as root would
// unpack devices and owners); a directory tree still works. Captures are
// still written, by tar.
#include <spawn.h>
#include <sys/wait.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/preflight/extract.h"
#include "common/status.h"

extern char** environ;

namespace gdrbench::agent::preflight {

absl::Status ExtractCapture(const std::string& tarball, const std::string&, const ExtractLimits&) {
  return absl::UnimplementedError(absl::StrCat(
      "capture ", tarball, ": this build has no libarchive (apt-get install libarchive-dev, rebuild); "
      "unpack the capture yourself and pass the directory to --fs-root"));
}

absl::Status ExtractCaptureBytes(const void*, size_t, const std::string&, const ExtractLimits&) {
  return absl::UnimplementedError("this build has no libarchive");
}

absl::Status PackCapture(const std::string& dir, const std::string& out_tar_gz) {
  std::vector<std::string> argv = {"tar", "-C", dir, "-czf", out_tar_gz, "."};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = posix_spawnp(&pid, "tar", nullptr, nullptr, args.data(), environ); rc != 0) {
    return ErrnoToStatus(rc, "spawn tar");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return ErrnoToStatus(errno, "waitpid tar");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "cannot write the capture ", out_tar_gz, ": tar ",
      WIFEXITED(status) ? absl::StrCat("exited with ", WEXITSTATUS(status)) : absl::StrCat("was killed by signal ", WTERMSIG(status)),
      " (its own message is above)"));
}

}  // namespace gdrbench::agent::preflight
