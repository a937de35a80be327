#include "agent/preflight/kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gdrbench::agent::preflight {
namespace {

class DevKmsgLog : public KernelLog {
 public:
  std::string source() const override { return "/dev/kmsg"; }
  absl::StatusOr<std::vector<std::string>> Messages() override {
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      return absl::UnavailableError(absl::StrCat(
          "/dev/kmsg not readable (", std::strerror(errno),
          "): the kernel log needs root, or kernel.dmesg_restrict=0"));
    }
    std::vector<std::string> out;
    char buf[8192];  // a record is at most ~1 KiB plus its dictionary
    for (int guard = 0; guard < 200000; ++guard) {
      ssize_t n = read(fd, buf, sizeof(buf) - 1);
      if (n < 0 && errno == EPIPE) continue;  // overwritten while reading: next record
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;                       // EAGAIN: the end of the buffer
      buf[n] = '\0';
      std::string record(buf, static_cast<size_t>(n));
      std::string msg = LogMessage(record.substr(0, record.find('\n')));
      if (!msg.empty()) out.push_back(std::move(msg));
    }
    close(fd);
    return out;
  }
};

class CapturedKernelLog : public KernelLog {
 public:
  explicit CapturedKernelLog(const FsRoot& fs) : fs_(fs) {}
  std::string source() const override { return fs_.Resolve(kCapturedDmesg); }
  absl::StatusOr<std::vector<std::string>> Messages() override {
    auto text = fs_.ReadFile(kCapturedDmesg);
    if (!text.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "no kernel log in this tree (", fs_.Resolve(kCapturedDmesg),
          " absent: captures by gdrbench-agent capture run as root include it)"));
    }
    std::vector<std::string> out;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::string msg = LogMessage(std::string(line));
      if (!msg.empty()) out.push_back(std::move(msg));
    }
    return out;
  }

 private:
  const FsRoot& fs_;
};

}  // namespace

std::unique_ptr<KernelLog> MakeDevKmsgLog() { return std::make_unique<DevKmsgLog>(); }
std::unique_ptr<KernelLog> MakeCapturedKernelLog(const FsRoot& fs) {
  return std::make_unique<CapturedKernelLog>(fs);
}

std::string LogMessage(const std::string& line) {
  if (line.empty()) return "";
  // "6,339,5140900,-;message": digits and commas, then flags, then ';'.
  size_t semi = line.find(';');
  if (semi != std::string::npos && semi > 0 && std::isdigit(static_cast<unsigned char>(line[0]))) {
    size_t commas = 0;
    bool header = true;
    for (size_t i = 0; i < semi && header; ++i) {
      char c = line[i];
      if (c == ',') ++commas;
      else if (!std::isdigit(static_cast<unsigned char>(c)) && commas < 3) header = false;
    }
    if (header && commas >= 3) return line.substr(semi + 1);
  }
  // "[   12.345678] message" or "[Tue Sep  8 17:16:02 2026] message".
  if (line[0] == '[') {
    size_t close = line.find("] ");
    if (close != std::string::npos) return line.substr(close + 2);
  }
  return line;
}

}  // namespace gdrbench::agent::preflight
