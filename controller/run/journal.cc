#include "controller/run/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::run {
namespace {

// Record checksum: a word-at-a-time multiplicative hash (FNV-1a's byte loop
// was the largest single cost of journaling zero-time tests). Detects torn
// and garbled records; not cryptographic.
uint32_t Checksum(const char* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

constexpr uint32_t kMaxRecord = 64 << 20;

}  // namespace

JournalWriter::JournalWriter(std::string path, int fd, Options o)
    : path_(std::move(path)), fd_(fd), options_(o) {
  if (options_.group_window.count() > 0) flusher_ = std::thread([this] { FlusherLoop(); });
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Create(
    const std::string& path, const v1::JournalHeader& header, Options options) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  std::unique_ptr<JournalWriter> w(new JournalWriter(path, fd, options));
  v1::JournalRecord rec;
  *rec.mutable_header() = header;
  RETURN_IF_ERROR(w->WriteRecord(rec));
  return w;
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Reopen(const std::string& path,
                                                                     uint64_t valid_bytes,
                                                                     Options options) {
  if (::truncate(path.c_str(), static_cast<off_t>(valid_bytes)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("journal ", path, ": truncate"));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, fd, options));
}

JournalWriter::~JournalWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::lock_guard<std::mutex> lock(mu_);
  (void)WritePendingLocked();
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::FrameLocked(size_t body_start) {
  const size_t n = pending_.size() - body_start;
  char head[8];
  const uint32_t len = static_cast<uint32_t>(n);
  const uint32_t sum = Checksum(pending_.data() + body_start, n);
  for (int i = 0; i < 4; ++i) {
    head[i] = static_cast<char>((len >> (8 * i)) & 0xff);
    head[4 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  }
  pending_.replace(body_start - 8, 8, head, 8);
}

absl::Status JournalWriter::Append(const v1::PairResult& pair) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  const bool was_empty = pending_.empty();
  // The wire form of JournalRecord{pair: ...} written directly (field 2,
  // length-delimited), saving a deep copy of the result per test.
  pending_.append(8, '\0');
  const size_t body = pending_.size();
  pending_.push_back(static_cast<char>((v1::JournalRecord::kPairFieldNumber << 3) | 2));
  for (size_t v = pair.ByteSizeLong();; v >>= 7) {
    if (v < 0x80) {
      pending_.push_back(static_cast<char>(v));
      break;
    }
    pending_.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  pair.AppendToString(&pending_);
  FrameLocked(body);
  if (options_.group_window.count() == 0) return WritePendingLocked();
  if (was_empty) cv_.notify_one();
  return absl::OkStatus();
}

absl::Status JournalWriter::WriteRecord(const v1::JournalRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.append(8, '\0');
  const size_t body = pending_.size();
  record.AppendToString(&pending_);
  FrameLocked(body);
  return WritePendingLocked();
}

absl::Status JournalWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return WritePendingLocked();
}

absl::Status JournalWriter::WritePendingLocked() {
  const char* p = pending_.data();
  size_t left = pending_.size();
  while (left > 0) {
    ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      error_ = ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": write"));
      return error_;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  pending_.clear();
  if (options_.sync && ::fdatasync(fd_) != 0) {
    error_ = ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": fdatasync"));
    return error_;
  }
  return absl::OkStatus();
}

void JournalWriter::FlusherLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (stop_) return;
    // Let the window fill, then write whatever arrived in it at once.
    cv_.wait_for(lock, options_.group_window, [&] { return stop_; });
    (void)WritePendingLocked();
  }
}

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  JournalContents out;
  size_t pos = 0;
  bool have_header = false;
  while (pos < data.size()) {
    if (data.size() - pos < 8) {
      out.torn_tail = true;
      break;
    }
    uint32_t len = GetU32(data.data() + pos);
    uint32_t sum = GetU32(data.data() + pos + 4);
    if (len > kMaxRecord || data.size() - pos - 8 < len) {
      out.torn_tail = true;
      break;
    }
    const char* body = data.data() + pos + 8;
    v1::JournalRecord rec;
    if (Checksum(body, len) != sum || !rec.ParseFromArray(body, static_cast<int>(len))) {
      // Only the very last record may be damaged (a write cut short).
      if (pos + 8 + len == data.size()) {
        out.torn_tail = true;
        break;
      }
      return absl::DataLossError(
          absl::StrCat("journal ", path, ": corrupt record at byte ", pos));
    }
    if (!have_header) {
      if (!rec.has_header()) {
        return absl::DataLossError(absl::StrCat("journal ", path, ": no header record"));
      }
      out.header = rec.header();
      have_header = true;
    } else if (rec.has_pair()) {
      out.pairs.push_back(std::move(*rec.mutable_pair()));
    }
    pos += 8 + len;
    out.valid_bytes = pos;
  }
  if (!have_header) return absl::DataLossError(absl::StrCat("journal ", path, ": empty or no header"));
  return out;
}

}  // namespace gdrbench::controller::run
