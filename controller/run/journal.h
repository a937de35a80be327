// Journal: the durable record of a sweep. A header, then one record per
// finished test, handed to the kernel the moment the test ends, so a
// controller killed at any point loses no finished test (the records are in
// the page cache; `sync` adds fdatasync to survive a machine crash as well).
//
// Group commit: with `group_window` > 0, records that finish within the
// window of each other share one write(2), issued by a flusher thread at most
// `group_window` after the first of them (and by Flush / the destructor). A
// kill can then lose only records younger than the window: 1 ms is far below
// any real test's duration (seconds) and removes the per-test syscall that
// dominates zero-time tests (bench/controller_scale). 0 = one write(2) per
// record, before Append returns.
//
// File format: records of [u32 little-endian length][u32 checksum of the
// bytes][serialized v1::JournalRecord]. A torn last record (the controller
// died mid-write) is detected by length or checksum and dropped on read.
// Thread safety: JournalWriter::Append may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

class JournalWriter {
 public:
  // Creates (truncates) `path` and writes the header. INTERNAL/PERMISSION_DENIED
  // naming the path when it cannot be created.
  struct Options {
    bool sync = false;
    std::chrono::microseconds group_window{1000};
  };
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                                const v1::JournalHeader& header,
                                                                Options options);
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                                const v1::JournalHeader& header) {
    return Create(path, header, Options{});
  }
  // Opens an existing journal for appending after `valid_bytes` (what
  // ReadJournal accepted): a torn tail is cut off first.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Reopen(const std::string& path,
                                                                uint64_t valid_bytes,
                                                                Options options);
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Reopen(const std::string& path,
                                                                uint64_t valid_bytes) {
    return Reopen(path, valid_bytes, Options{});
  }
  // Flushes what is pending.
  ~JournalWriter();

  // Queues (group commit) or writes one record. An earlier write failure is
  // returned here (INTERNAL naming the path and errno), so a failing disk
  // stops the sweep at the next test.
  absl::Status Append(const v1::PairResult& pair);
  // Writes everything pending now.
  absl::Status Flush();
  const std::string& path() const { return path_; }

 private:
  JournalWriter(std::string path, int fd, Options o);
  absl::Status WriteRecord(const v1::JournalRecord& record);
  void FrameLocked(size_t body_start);     // adds the header of the record at body_start - 8
  absl::Status WritePendingLocked();       // mu_ held
  void FlusherLoop();

  std::string path_;
  int fd_;
  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string pending_;                    // framed records not yet written
  absl::Status error_;
  bool stop_ = false;
  std::thread flusher_;
};

struct JournalContents {
  v1::JournalHeader header;
  std::vector<v1::PairResult> pairs;
  uint64_t valid_bytes = 0;     // bytes of whole, checksummed records
  bool torn_tail = false;       // a partial record followed them
};

// NOT_FOUND naming the path; DATA_LOSS when the first record is not a header
// or a record in the middle is corrupt.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path);

}  // namespace gdrbench::controller::run
