// Reading a journal back (journal.h: StreamJournal, ReadJournal). The file
// is walked front to back through one buffer: a resume of a 1024 x 8 run
// (940 MB, 8.4 M records) read the whole file and kept every PairResult,
// 14 GB at its peak (bench/results/2026-12-05-journal-read-back.txt).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "common/status.h"
#include "controller/run/journal.h"
#include "controller/run/journal_records.h"

namespace gdrbench::controller::run {
namespace {

using journal_records::GetU32;
using journal_records::kMagic;
using journal_records::kMaxRecord;

constexpr size_t kChunk = 4 << 20;

// The journal's bytes from a file offset on, a window at a time.
class Window {
 public:
  Window(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  ~Window() { ::close(fd_); }
  uint64_t size() const { return size_; }

  // Makes bytes [pos, pos + n) available (n <= size - pos) and returns them.
  absl::StatusOr<const char*> At(uint64_t pos, size_t n) {
    if (pos < base_ || pos + n > base_ + buf_.size()) {
      // Keep what is still ahead, then read at least a chunk past it.
      const size_t keep = pos < base_ + buf_.size() && pos >= base_ ? base_ + buf_.size() - pos : 0;
      if (keep > 0) std::memmove(buf_.data(), buf_.data() + (pos - base_), keep);
      const size_t want = std::max(n, kChunk);
      const size_t fill = static_cast<size_t>(std::min<uint64_t>(want, size_ - pos));
      buf_.resize(std::max(fill, keep));
      size_t have = keep;
      while (have < fill) {
        ssize_t r = ::pread(fd_, buf_.data() + have, fill - have, static_cast<off_t>(pos + have));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": read"));
        if (r == 0) {
          return absl::DataLossError(absl::StrCat("journal ", path_, " shrank to ", pos + have,
                                                  " bytes while it was read (another process truncated it?)"));
        }
        have += static_cast<size_t>(r);
      }
      base_ = pos;
    }
    return buf_.data() + (pos - base_);
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
  std::string buf_;
  uint64_t base_ = 0;  // the file offset of buf_[0]
};

// What the visitor said, kept apart from the record's own faults: a
// visitor's error is returned as it is, never taken for a torn tail.
struct VisitorError {
  absl::Status status;
  absl::Status Keep(absl::Status st) {
    if (st.ok()) return st;
    status = std::move(st);
    return absl::AbortedError("stopped by the visitor");
  }
};

// Calls `body(data, len)` for each whole frame from `pos` on. Only the very
// last frame may be damaged (journal.h says how); damage before it is
// DATA_LOSS naming its offset. A `body` error stops the walk; one `visitor`
// holds is returned unchanged.
template <typename Fn>
absl::Status ForEachFrame(Window& w, uint64_t pos, const std::string& path, JournalSummary* out,
                          VisitorError& visitor, Fn&& body) {
  out->valid_bytes = pos;
  auto where = [&](uint64_t at) { return absl::StrCat("journal ", path, ": record at byte ", at, ": "); };
  auto torn = [&](uint64_t at) {
    out->torn_tail = true;
    out->dropped_bytes = w.size() - at;
    return absl::OkStatus();
  };
  while (pos < w.size()) {
    const uint64_t left = w.size() - pos;
    if (left < 8) return torn(pos);
    GDR_ASSIGN_OR_RETURN(const char* head, w.At(pos, 8));
    const uint32_t len = GetU32(head);
    const uint32_t sum = GetU32(head + 4);
    if (len > kMaxRecord) {
      return absl::DataLossError(absl::StrCat(where(pos), "a length of ", len, " bytes (at most ", kMaxRecord,
                                              " are written): the file is damaged here, ", left,
                                              " bytes before its end"));
    }
    if (left - 8 < len) return torn(pos);
    GDR_ASSIGN_OR_RETURN(const char* p, w.At(pos + 8, len));
    absl::Status st = journal_records::FrameChecksum(p, len) == sum ? body(p, len)
                                                                     : absl::DataLossError("bad checksum");
    if (!visitor.status.ok()) return visitor.status;
    if (!st.ok()) {
      if (pos + 8 + len == w.size() && absl::IsDataLoss(st)) return torn(pos);
      return absl::Status(st.code(), absl::StrCat(where(pos), st.message()));
    }
    pos += 8 + len;
    out->valid_bytes = pos;
  }
  return absl::OkStatus();
}

// Hands a test record to the visitor: as a FinishedTest, as a PairResult,
// or both (journal.h says when which).
class TestSink {
 public:
  explicit TestSink(const JournalVisitor& visit) : visit_(visit) {}
  VisitorError& visitor() { return visitor_; }

  // A format-2 record's JournalTest bytes.
  absl::Status Format2(const char* p, int n, const v1::JournalPlan& plan) {
    if (!visit_.on_test && visit_.on_measured) {
      if (!flat_) flat_.emplace(plan);
      GDR_RETURN_IF_ERROR(journal_records::DecodeFinished(p, static_cast<size_t>(n), *flat_, &finished_));
      return visitor_.Keep(visit_.on_measured(finished_));
    }
    // Records are parsed on an arena, dropped every kArenaRecords (a
    // message on the heap frees and allocates its sub-messages at every
    // parse); the PairResult is reused record after record (ToPairResult).
    constexpr size_t kArenaRecords = 4096;
    if (t_ == nullptr || ++in_arena_ == kArenaRecords) {
      arena_.Reset();
      t_ = google::protobuf::Arena::CreateMessage<v1::JournalTest>(&arena_);
      in_arena_ = 0;
    }
    if (!t_->ParseFromArray(p, n)) return absl::DataLossError("bad test record");
    GDR_RETURN_IF_ERROR(journal_records::ToPairResult(*t_, plan, &pair_));
    return Whole(pair_, t_->src(), t_->dst());
  }
  // A whole result (format 1's, or format 2's rebuilt).
  absl::Status Whole(const v1::PairResult& pair, uint32_t src, uint32_t dst) {
    if (visit_.on_test) GDR_RETURN_IF_ERROR(visitor_.Keep(visit_.on_test(pair, src, dst)));
    if (!visit_.on_measured) return absl::OkStatus();
    finished_.src = src;
    finished_.dst = dst;
    const bool by_name = src == kNoNodeIndex;
    finished_.src_node = by_name ? std::string_view(pair.src().node()) : std::string_view();
    finished_.dst_node = by_name ? std::string_view(pair.dst().node()) : std::string_view();
    finished_.round = pair.round();
    analysis::Measured(pair, &finished_.measured);
    return visitor_.Keep(visit_.on_measured(finished_));
  }

 private:
  const JournalVisitor& visit_;
  VisitorError visitor_;
  google::protobuf::Arena arena_;
  v1::JournalTest* t_ = nullptr;  // on arena_
  size_t in_arena_ = 0;
  v1::PairResult pair_;
  FinishedTest finished_;
  std::optional<journal_records::FlatPlan> flat_;  // of the plan, once it is read
};

// Format 1: every frame a JournalRecord, the first one the header.
absl::Status ReadFormat1(Window& w, const std::string& path, const JournalVisitor& visit, JournalSummary* out) {
  out->format = 1;
  bool have_header = false;
  v1::JournalRecord rec;
  TestSink sink(visit);
  VisitorError& visitor = sink.visitor();
  GDR_RETURN_IF_ERROR(
      ForEachFrame(w, 0, path, out, visitor, [&](const char* p, uint32_t len) -> absl::Status {
        if (!rec.ParseFromArray(p, static_cast<int>(len))) return absl::DataLossError("not a record");
        if (!have_header) {
          if (!rec.has_header()) return absl::DataLossError("no header record");
          out->header = std::move(*rec.mutable_header());
          have_header = true;
          return visit.on_start ? visitor.Keep(visit.on_start(*out)) : absl::OkStatus();
        }
        if (!rec.has_pair()) return absl::OkStatus();
        ++out->tests;
        return sink.Whole(rec.pair(), kNoNodeIndex, kNoNodeIndex);
      }));
  if (!have_header) return absl::DataLossError(absl::StrCat("journal ", path, ": empty or no header"));
  return absl::OkStatus();
}

absl::Status ReadFormat2(Window& w, const std::string& path, const JournalVisitor& visit, JournalSummary* out) {
  out->format = 2;
  int parts = 0;  // header, then plan
  TestSink sink(visit);
  VisitorError& visitor = sink.visitor();
  GDR_RETURN_IF_ERROR(
      ForEachFrame(w, kMagic.size(), path, out, visitor, [&](const char* p, uint32_t len) -> absl::Status {
        if (len < 1) return absl::DataLossError("empty record");
        const char kind = p[0];
        const int n = static_cast<int>(len - 1);
        const char expect = parts == 0   ? journal_records::kHeader
                            : parts == 1 ? journal_records::kPlan
                                         : journal_records::kTest;
        if (kind != expect) {
          return absl::DataLossError(absl::StrCat("a '", std::string(1, kind), "' record where '",
                                                  std::string(1, expect), "' belongs"));
        }
        if (kind == journal_records::kHeader) {
          if (!out->header.ParseFromArray(p + 1, n)) return absl::DataLossError("bad header");
          ++parts;
          return absl::OkStatus();
        }
        if (kind == journal_records::kPlan) {
          if (!out->plan.ParseFromArray(p + 1, n)) return absl::DataLossError("bad plan");
          ++parts;
          return visit.on_start ? visitor.Keep(visit.on_start(*out)) : absl::OkStatus();
        }
        GDR_RETURN_IF_ERROR(sink.Format2(p + 1, n, out->plan));
        ++out->tests;
        return absl::OkStatus();
      }));
  if (parts < 2) return absl::DataLossError(absl::StrCat("journal ", path, ": no header and plan"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<JournalSummary> StreamJournal(const std::string& path, const JournalVisitor& visit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoToStatus(err, absl::StrCat("journal ", path, ": stat"));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat("journal ", path, " is not a regular file"));
  }
  Window w(fd, static_cast<uint64_t>(st.st_size), path);
  JournalSummary out;
  bool format2 = false;
  if (w.size() >= kMagic.size()) {
    GDR_ASSIGN_OR_RETURN(const char* head, w.At(0, kMagic.size()));
    format2 = std::string_view(head, kMagic.size()) == kMagic;
  }
  GDR_RETURN_IF_ERROR(format2 ? ReadFormat2(w, path, visit, &out) : ReadFormat1(w, path, visit, &out));
  return out;
}

absl::StatusOr<JournalContents> ReadJournal(const std::string& path) {
  JournalContents out;
  JournalVisitor v;
  v.on_test = [&](const v1::PairResult& p, uint32_t, uint32_t) {
    out.pairs.push_back(p);
    return absl::OkStatus();
  };
  GDR_ASSIGN_OR_RETURN(JournalSummary s, StreamJournal(path, v));
  out.format = s.format;
  out.header = std::move(s.header);
  out.plan = std::move(s.plan);
  out.valid_bytes = s.valid_bytes;
  out.torn_tail = s.torn_tail;
  return out;
}

}  // namespace gdrbench::controller::run
