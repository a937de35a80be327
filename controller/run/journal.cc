#include "controller/run/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::run {
namespace {

uint32_t Fnv1a(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 16777619u;
  }
  return h;
}

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

constexpr uint32_t kMaxRecord = 64 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Create(
    const std::string& path, const v1::JournalHeader& header, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  std::unique_ptr<JournalWriter> w(new JournalWriter(path, fd, sync));
  v1::JournalRecord rec;
  *rec.mutable_header() = header;
  RETURN_IF_ERROR(w->WriteRecord(rec));
  return w;
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Reopen(const std::string& path,
                                                                     uint64_t valid_bytes,
                                                                     bool sync) {
  if (::truncate(path.c_str(), static_cast<off_t>(valid_bytes)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("journal ", path, ": truncate"));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, fd, sync));
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status JournalWriter::Append(const v1::PairResult& pair) {
  v1::JournalRecord rec;
  *rec.mutable_pair() = pair;
  return WriteRecord(rec);
}

absl::Status JournalWriter::WriteRecord(const v1::JournalRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  buf_.assign(8, '\0');
  record.AppendToString(&buf_);
  const size_t n = buf_.size() - 8;
  std::string head;
  PutU32(&head, static_cast<uint32_t>(n));
  PutU32(&head, Fnv1a(buf_.data() + 8, n));
  buf_.replace(0, 8, head);
  const char* p = buf_.data();
  size_t left = buf_.size();
  while (left > 0) {
    ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": write"));
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (sync_ && ::fdatasync(fd_) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": fdatasync"));
  }
  return absl::OkStatus();
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
    if (Fnv1a(body, len) != sum || !rec.ParseFromArray(body, static_cast<int>(len))) {
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
