// A sweep's journal (format 2, controller/run/journal.h) read while it is
// being written: the header and the plan, then each whole test record as it
// appears, numbered 0, 1, ... in file order. A live upload (live_upload.h)
// sends the records by these numbers, so after a break it resumes from the
// journal at the number the server acknowledged, not from memory.
//
// A frame not yet whole (the writer is in the middle of it, or the file ends
// in a torn record) is left for a later read; a bad frame followed by more
// bytes is DATA_LOSS. Memory: one chunk's records, plus one byte offset per
// Mark()ed test (the chunk starts), so Seek is a short read from the mark
// before it.
// Errors: NOT_FOUND / PERMISSION_DENIED naming the path; UNAVAILABLE while
// the header and plan are not written yet; FAILED_PRECONDITION for a
// format-1 journal; DATA_LOSS naming the byte offset.
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "gdrbench/v1/journal.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller {

class JournalTail {
 public:
  explicit JournalTail(std::string path) : path_(std::move(path)) {}
  ~JournalTail();
  JournalTail(const JournalTail&) = delete;
  JournalTail& operator=(const JournalTail&) = delete;

  // Reads the header and the plan (once; then OK at once).
  absl::Status Start();
  bool begun() const { return started_; }
  const v1::JournalHeader& header() const { return header_; }
  const v1::JournalPlan& plan() const { return plan_; }

  // Calls `fn` for the next whole test records, at most `max`; returns how
  // many it read (0: none written yet). An error of `fn` stops and is returned.
  absl::StatusOr<size_t> Read(size_t max,
                              const std::function<absl::Status(uint64_t index, const v1::JournalTest&)>& fn);
  // The number of the next record Read hands over.
  uint64_t next_test() const { return next_test_; }
  // Remembers where record `next_test()` starts (a chunk's first test).
  void Mark() { marks_[next_test_] = offset_; }
  // The next Read starts at record `index`. OUT_OF_RANGE when the journal
  // holds fewer records now (the next_test() is then the last whole one's + 1).
  absl::Status Seek(uint64_t index);

 private:
  enum class Frame { kWhole, kNotYet };
  // The frame at offset_ into body_ (kNotYet: not whole yet).
  absl::StatusOr<Frame> NextFrame();

  std::string path_;
  int fd_ = -1;
  bool started_ = false;
  v1::JournalHeader header_;
  v1::JournalPlan plan_;
  uint64_t offset_ = 0;  // the next frame's byte offset
  uint64_t next_test_ = 0;
  std::map<uint64_t, uint64_t> marks_;  // test number -> byte offset
  std::string body_;                    // the last frame's body (kind byte first)
};

}  // namespace gdrbench::controller
