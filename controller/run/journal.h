// Journal: the durable record of a sweep. A header, the plan's identities,
// then one record per finished test, handed to the kernel the moment the test
// ends, so a controller killed at any point loses no finished test (the
// records are in the page cache; `sync` adds fdatasync to survive a machine
// crash as well).
//
// Group commit: with `group_window` > 0, records that finish within the
// window of each other share one write(2), issued by a flusher thread at most
// `group_window` after the first of them (and by Flush / the destructor). A
// kill can then lose only records younger than the window: 1 ms is far below
// any real test's duration (seconds) and removes the per-test syscall that
// dominates zero-time tests (bench/controller_scale). 0 = one write(2) per
// record, before Append returns. The write(2) runs outside the locks Append
// takes, so tests keep finishing while the kernel copies. Each appending
// thread encodes into its own buffer under its own lock (one writev(2) takes
// them all): with one shared buffer the two workers and the flusher
// contended for one mutex on every record, the largest single cost of the
// journal at 1024 x 8 (bench/results/2026-12-01-controller-journal-2.txt).
// Records of one thread stay in order; records of different threads may
// interleave in any order (each is whole, and a resume needs no order).
//
// File format 2: the line "gdrbench-journal 2\n", then frames of
// [u32 little-endian length][u32 checksum of the body][body], a body being
// one kind byte and a message: 'H' v1::JournalHeader, then 'P'
// v1::JournalPlan (each node's name, agent address and per rail its NIC,
// memory spec and link rate), then 'T' v1::JournalTest per finished test:
// the node indices, rail and round, and what the agents measured; the rest
// of the PairResult is rebuilt from the plan on read (about 45 % of the
// bytes of a format-1 record, bench/results). A torn last frame (the
// controller died mid-write) is detected by length or checksum and dropped.
//
// Format 1 (before 2026-12-01: no first line, every frame a JournalRecord
// holding a whole PairResult) is still read (ReadJournal: `runs upload`),
// but not continued: Reopen refuses it with one line.
// Thread safety: JournalWriter::Append may be called concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "controller/run/plan.h"
#include "gdrbench/v1/journal.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

// What FillIdentity takes from the plan, per node and rail.
v1::JournalPlan DescribePlan(const Plan& plan);

class JournalWriter {
 public:
  struct Options {
    bool sync = false;
    std::chrono::microseconds group_window{1000};
  };
  // Creates (truncates) `path` and writes the header and the plan.
  // INTERNAL/PERMISSION_DENIED naming the path when it cannot be created.
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                                const v1::JournalHeader& header,
                                                                const v1::JournalPlan& plan,
                                                                Options options);
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Create(const std::string& path,
                                                                const v1::JournalHeader& header,
                                                                const v1::JournalPlan& plan) {
    return Create(path, header, plan, Options{});
  }
  // Opens an existing journal for appending after `valid_bytes` (what
  // ReadJournal accepted): a torn tail is cut off first. FAILED_PRECONDITION
  // for a format-1 journal (it cannot be continued by this version).
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Reopen(const std::string& path,
                                                                uint64_t valid_bytes,
                                                                const v1::JournalPlan& plan,
                                                                Options options);
  static absl::StatusOr<std::unique_ptr<JournalWriter>> Reopen(const std::string& path,
                                                                uint64_t valid_bytes,
                                                                const v1::JournalPlan& plan) {
    return Reopen(path, valid_bytes, plan, Options{});
  }
  // Flushes what is pending.
  ~JournalWriter();

  // Queues (group commit) or writes one record. An earlier write failure is
  // returned here (INTERNAL naming the path and errno), so a failing disk
  // stops the sweep at the next test; INTERNAL for a result whose node is
  // not in the plan.
  absl::Status Append(const v1::PairResult& pair);
  // The same, the nodes given by their indices in the plan (the runner's
  // schedule::Test): no look-up by name, which was a tenth of the journal's
  // cost at 1024 x 8; the names are still checked against the plan.
  absl::Status Append(const v1::PairResult& pair, uint32_t src, uint32_t dst);
  // Writes everything pending now.
  absl::Status Flush();
  const std::string& path() const { return path_; }

 private:
  // One appending thread's frames not yet written.
  struct Shard {
    std::thread::id owner;  // set once, under shards_mu_
    std::mutex mu;
    std::string pending;   // mu
    std::string writing;   // write_mu_: taken from `pending` by WritePending
  };
  JournalWriter(std::string path, int fd, const v1::JournalPlan& plan, Options o);
  absl::Status WriteFrame(char kind, const google::protobuf::MessageLite& body);
  Shard* ThisThreadShard();
  absl::Status WritePending();             // no shard lock held
  absl::Status Error();
  void FlusherLoop();

  std::string path_;
  int fd_;
  Options options_;
  uint64_t id_;                            // tells this writer's shards from another's (thread_local)
  v1::JournalPlan plan_;
  std::unordered_map<std::string, uint32_t> node_index_;  // plan_'s nodes by name
  std::mutex write_mu_;                    // one write sequence at a time; taken before a shard's mu
  std::mutex shards_mu_;                   // guards shards_ (not their contents); after write_mu_
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> failed_{false};        // error_ is set
  std::atomic<bool> dirty_{false};         // a shard has pending frames the flusher was not told of
  std::mutex mu_;
  std::condition_variable cv_;
  absl::Status error_;                     // mu_
  bool stop_ = false;                      // mu_
  std::thread flusher_;
};

// What a read of a journal found besides its test records.
struct JournalSummary {
  uint32_t format = 0;          // 1 or 2
  v1::JournalHeader header;
  v1::JournalPlan plan;         // format 2
  uint64_t tests = 0;           // test records handed to on_test
  uint64_t valid_bytes = 0;     // bytes of whole, checksummed records
  bool torn_tail = false;       // a partial record followed them ...
  uint64_t dropped_bytes = 0;   // ... of this many bytes (Reopen cuts them off)
};

// A format-1 record carries no plan indices.
inline constexpr uint32_t kNoNodeIndex = UINT32_MAX;

// What a resume needs of a finished test (JournalVisitor::on_measured): the
// test's identity and what the matrices take of it, nothing else.
struct FinishedTest {
  uint32_t src = 0, dst = 0;            // plan indices; kNoNodeIndex in format 1 ...
  std::string_view src_node, dst_node;  // ... where these name them (empty in format 2)
  uint32_t round = 0;
  analysis::MeasuredTest measured;  // its rail and the targets' rail among it
};

struct JournalVisitor {
  // Once the header (format 1) or the header and the plan (format 2) are
  // read, before the first test. May be empty. An error stops the read and
  // is returned as it is.
  std::function<absl::Status(const JournalSummary&)> on_start;
  // Each test record, rebuilt into the whole PairResult the runner handed
  // over; `src`/`dst` index summary.plan.nodes (kNoNodeIndex in format 1).
  // The message is reused for the next record: copy what you keep. An error
  // stops the read and is returned as it is.
  std::function<absl::Status(const v1::PairResult&, uint32_t src, uint32_t dst)> on_test;
  // Each test record as a FinishedTest (reused for the next record; its
  // views point into the read buffer: copy what you keep). With on_test
  // empty a format-2 record is decoded into it alone, no PairResult built
  // (the summary, timestamps and everything else a matrix does not take are
  // skipped by their wire lengths, not parsed: a resume of 1024 x 8 reads
  // several times faster); with on_test set, it is taken from the
  // PairResult. An error stops the read and is returned as it is.
  std::function<absl::Status(const FinishedTest&)> on_measured;
};

// Reads `path` front to back in a fixed buffer (a few MiB, or one record if
// larger): memory does not grow with the journal. What is wrong, and what is
// done about it (tests/unit/controller/run/journal_test.cc pins each):
//   NOT_FOUND / PERMISSION_DENIED naming the path;
//   DATA_LOSS naming the path and the record's byte offset: the header (or
//     the plan) missing; a record before the last one whose checksum or
//     contents are bad; a record that names a node or rail the plan lacks;
//     a frame length beyond 64 MiB with bytes after it (a garbled length; a
//     cut write cannot make one);
//   recovered and said so (torn_tail, dropped_bytes): the last record cut
//     short (fewer bytes left than its length, or under 8) or, ending at the
//     file's end, failing its checksum (a machine crash can leave zeros).
// Thread safety: none needed (no shared state); the callbacks run on the
// caller's thread.
absl::StatusOr<JournalSummary> StreamJournal(const std::string& path, const JournalVisitor& visit);

// The whole journal in memory (StreamJournal keeping every record): for
// small journals and tests. A resume or an upload of a large run streams.
struct JournalContents {
  uint32_t format = 0;          // 1 or 2
  v1::JournalHeader header;
  v1::JournalPlan plan;         // format 2
  std::vector<v1::PairResult> pairs;  // whole, as the runner handed them over
  uint64_t valid_bytes = 0;     // bytes of whole, checksummed records
  bool torn_tail = false;       // a partial record followed them
};

// Errors as StreamJournal.
absl::StatusOr<JournalContents> ReadJournal(const std::string& path);

}  // namespace gdrbench::controller::run
