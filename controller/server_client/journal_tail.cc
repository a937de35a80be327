#include "controller/server_client/journal_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/run/journal_records.h"

namespace gdrbench::controller {
namespace {

namespace jr = run::journal_records;

// Reads up to n bytes at `at`; how many it got (fewer at the file's end).
absl::StatusOr<size_t> ReadAt(int fd, uint64_t at, char* out, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path, ": read"));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

JournalTail::~JournalTail() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<JournalTail::Frame> JournalTail::NextFrame() {
  char head[8];
  GDR_ASSIGN_OR_RETURN(size_t got, ReadAt(fd_, offset_, head, sizeof(head), path_));
  if (got < sizeof(head)) return Frame::kNotYet;
  const uint32_t len = jr::GetU32(head);
  const uint32_t sum = jr::GetU32(head + 4);
  if (len > jr::kMaxRecord || len < 1) {
    return absl::DataLossError(
        absl::StrCat("journal ", path_, ": record at byte ", offset_, ": a length of ", len, " bytes"));
  }
  body_.resize(len);
  GDR_ASSIGN_OR_RETURN(got, ReadAt(fd_, offset_ + 8, body_.data(), len, path_));
  if (got < len) return Frame::kNotYet;
  if (jr::FrameChecksum(body_.data(), len) != sum) {
    // The writer's last frame may still be on its way; damage before more bytes is not.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > offset_ + 8 + len) {
      return absl::DataLossError(
          absl::StrCat("journal ", path_, ": record at byte ", offset_, ": bad checksum"));
    }
    return Frame::kNotYet;
  }
  return Frame::kWhole;
}

absl::Status JournalTail::Start() {
  if (started_) return absl::OkStatus();
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path_));
  }
  std::string magic(jr::kMagic.size(), '\0');
  GDR_ASSIGN_OR_RETURN(size_t got, ReadAt(fd_, 0, magic.data(), magic.size(), path_));
  if (got < magic.size()) return absl::UnavailableError(absl::StrCat("journal ", path_, ": not begun yet"));
  if (magic != jr::kMagic) {
    return absl::FailedPreconditionError(
        absl::StrCat("journal ", path_, " is format 1 (an older gdrbench): it is not sent live"));
  }
  offset_ = magic.size();
  for (char want : {jr::kHeader, jr::kPlan}) {
    GDR_ASSIGN_OR_RETURN(Frame f, NextFrame());
    if (f == Frame::kNotYet)
      return absl::UnavailableError(absl::StrCat("journal ", path_, ": not begun yet"));
    if (body_[0] != want) {
      return absl::DataLossError(absl::StrCat("journal ", path_, ": record at byte ", offset_, " is a '",
                                              body_.substr(0, 1), "' where '", std::string(1, want),
                                              "' belongs"));
    }
    google::protobuf::MessageLite& m = want == jr::kHeader
                                           ? static_cast<google::protobuf::MessageLite&>(header_)
                                           : static_cast<google::protobuf::MessageLite&>(plan_);
    if (!m.ParseFromArray(body_.data() + 1, static_cast<int>(body_.size() - 1))) {
      return absl::DataLossError(
          absl::StrCat("journal ", path_, ": record at byte ", offset_, " does not parse"));
    }
    offset_ += 8 + body_.size();
  }
  started_ = true;
  marks_[0] = offset_;
  return absl::OkStatus();
}

absl::StatusOr<size_t> JournalTail::Read(
    size_t max, const std::function<absl::Status(uint64_t, const v1::JournalTest&)>& fn) {
  GDR_RETURN_IF_ERROR(Start());
  size_t n = 0;
  v1::JournalTest test;
  while (n < max) {
    GDR_ASSIGN_OR_RETURN(Frame f, NextFrame());
    if (f == Frame::kNotYet) break;
    if (body_[0] != jr::kTest || !test.ParseFromArray(body_.data() + 1, static_cast<int>(body_.size() - 1))) {
      return absl::DataLossError(
          absl::StrCat("journal ", path_, ": record at byte ", offset_, " is not a test record"));
    }
    GDR_RETURN_IF_ERROR(fn(next_test_, test));
    offset_ += 8 + body_.size();
    ++next_test_;
    ++n;
  }
  return n;
}

absl::Status JournalTail::Seek(uint64_t index) {
  GDR_RETURN_IF_ERROR(Start());
  auto mark = marks_.upper_bound(index);
  --mark;  // marks_[0] exists
  offset_ = mark->second;
  next_test_ = mark->first;
  while (next_test_ < index) {
    GDR_ASSIGN_OR_RETURN(Frame f, NextFrame());
    if (f == Frame::kNotYet) {
      return absl::OutOfRangeError(
          absl::StrCat("journal ", path_, " holds ", next_test_, " tests, not ", index));
    }
    offset_ += 8 + body_.size();
    ++next_test_;
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller
