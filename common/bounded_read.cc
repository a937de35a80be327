#include "common/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/limits.h"
#include "common/status.h"

namespace gdrbench {
namespace {

const char* KindOf(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

absl::Status TooLarge(const std::string& name, size_t max_bytes) {
  return absl::FailedPreconditionError(
      absl::StrCat(name, " holds more than ", max_bytes, " bytes, the most read from one file"));
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFd(int fd, const std::string& name, size_t max_bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoToStatus(errno, absl::StrCat("stat ", name));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(name, " is ", KindOf(st.st_mode), ", not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return TooLarge(name, max_bytes);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string out;
  out.resize(std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes) + 4096);
  size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (have > max_bytes) return TooLarge(name, max_bytes);
      out.resize(std::min(out.size() * 2, max_bytes + 1));
    }
    ssize_t n = read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, absl::StrCat("read ", name));
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (have > max_bytes) return TooLarge(name, max_bytes);
  out.resize(have);
  return out;
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path) {
  return ReadBoundedFile(path, limits::kMaxFileBytes);
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("open ", path));
  absl::StatusOr<std::string> content = ReadRegularFd(fd, path, max_bytes);
  close(fd);
  return content;
}

}  // namespace gdrbench
