// Journal: the durable record of a sweep. A header, then one record per
// finished test, each appended with a single write(2) the moment the test
// ends, so a controller killed at any point loses no finished test (the
// records are in the kernel's page cache; use `sync_every_record` to survive
// a machine crash as well).
//
// File format: records of [u32 little-endian length][u32 FNV-1a of the
// bytes][serialized v1::JournalRecord]. A torn last record (the controller
// died mid-write) is detected by length or checksum and dropped on read.
// Thread safety: JournalWriter::Append may be called concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

class JournalWriter {
 public:
  // Creates (truncates) `path` and writes the header. INTERNAL/PERMISSION_DENIED
  // naming the path when it cannot be created.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                                const v1::JournalHeader& header,
                                                                bool sync_every_record = false);
  // Opens an existing journal for appending after `valid_bytes` (what
  // ReadJournal accepted): a torn tail is cut off first.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Reopen(const std::string& path,
                                                                uint64_t valid_bytes,
                                                                bool sync_every_record = false);
  ~JournalWriter();

  // One write(2). INTERNAL naming the path and errno on failure.
  absl::Status Append(const v1::PairResult& pair);
  const std::string& path() const { return path_; }

 private:
  JournalWriter(std::string path, int fd, bool sync) : path_(std::move(path)), fd_(fd), sync_(sync) {}
  absl::Status WriteRecord(const v1::JournalRecord& record);

  std::string path_;
  int fd_;
  bool sync_;
  std::mutex mu_;
  std::string buf_;  // reused under mu_
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
