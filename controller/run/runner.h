// SweepRunner: runs a plan's rounds one after another, the tests of a round
// in parallel on a worker pool, each through a PairTester. A failed test is
// retried `retries` times and then recorded as a failed cell; nothing aborts
// the sweep. Tests involving an excluded node become SKIPPED results with the
// exclusion reason. Tests in `already_done` (from a journal) are not run
// again.
//
// Set-up ahead (RunnerOptions::prepare_next_round): while a round's tests
// run, its later tests and the next round's first are set up (their targets
// opened) on other threads, at most one round ahead and at most
// `parallelism` tests of a round ahead of its workers (prepare_ahead.h): a
// NIC holds at most the target of the test moving data on it and one
// prepared for its next test, and the fleet at most 2 x parallelism targets
// opened ahead, whatever a round's size. Data phases never run ahead:
// a round's tests start only once the round before has finished. A set-up
// that failed is its test's failure (reported when the test runs, then
// retried as any); a set-up whose test does not run (cancel, an on_result
// error) is released (its target closed).
//
// Cancellation: once `cancel` is raised no further test starts; tests already
// running finish (their RPCs have deadlines and their targets are closed),
// are handed to on_result as usual, the next round's targets opened ahead
// are closed, and Run returns CANCELLED.
// Before the first test the schedule is validated (schedule::ValidateSchedule
// over the plan's shapes): FAILED_PRECONDITION naming the round, node and NIC
// or GPU when one would be in two tests of a round; nothing runs then.
//
// Every finished test goes to `on_result_concurrent` at once from its worker
// (the journal append), then to `on_result` (whatever the caller collects),
// serialized: at once when no other worker is in on_result, else queued in
// its worker and handed over with that worker's next result (at most 64
// wait) or at the end of the round. Every result of a round is handed over
// before the next round starts; across workers the order is not the
// completion order.
// Thread safety: Run is called from one thread; on_result and on_progress
// run on worker threads, one at a time; on_result_concurrent concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/run/cancel.h"
#include "controller/run/pair_tester.h"
#include "controller/run/plan.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

struct Progress {
  size_t tests_total = 0;
  size_t tests_done = 0;       // including resumed ones
  size_t tests_resumed = 0;
  size_t tests_bad = 0;        // finished with a status other than OK
  size_t round = 0;            // 0-based round now running
  size_t rounds = 0;
  double elapsed_s = 0;
  double eta_s = -1;           // -1 until something ran
};

struct RunnerOptions {
  uint32_t parallelism = 64;   // worker threads (the caller's thread included)
  uint32_t retries = 1;        // extra attempts for a test that is not OK
  // Must return OK; an error (the journal cannot be written) stops the run
  // after the current round and is returned by Run.
  // `test` is the plan's (node indices into plan.nodes), as for
  // on_result_concurrent.
  std::function<absl::Status(const v1::PairResult&, const schedule::Test& test)> on_result;
  // Called first, from the worker threads concurrently (not under the lock
  // that serializes on_result): for thread-safe work such as the journal's
  // Append, so two workers do not queue behind each other's encoding. Its
  // errors count as on_result's.
  // `test` is the plan's (node indices into plan.nodes).
  std::function<absl::Status(const v1::PairResult&, const schedule::Test& test)> on_result_concurrent;
  std::function<void(const Progress&)> on_progress;  // after every finished test
  // Added to every round number (results, TestKey): a second pass over the
  // same plan (outlier retests) numbers its rounds after the first pass's.
  uint32_t round_offset = 0;
  const CancelToken* cancel = nullptr;  // not owned; may be null
  // Sets up tests ahead of the workers (PairTester::Prepare: the agents'
  // targets opened), the next round's while this round's run, on as many
  // threads again as the round's workers and at most that many tests of a
  // round ahead (prepare_ahead.h); false: each test sets itself up when it
  // runs.
  bool prepare_next_round = true;
};

// The identity of a test for --resume: round, source, target, rail (and the
// target's rail when it differs).
// `dst_rail`: the target's rail (cross-rail), `rail` for every other test.
std::string TestKey(uint32_t round, const std::string& src, const std::string& dst, uint32_t rail,
                    uint32_t dst_rail);
std::string TestKey(const v1::PairResult& r);

// The tests a resume finds finished in its journal, by round and the plan's
// node indices: one 64-bit key a test (a sorted vector: 67 MB for the 8.4 M
// tests of 1024 x 8, where a set of TestKey strings took gigabytes).
// Add them all, then Seal once; Contains before Seal is false.
// Not thread-safe while adding; Contains may be called concurrently.
class DoneTests {
 public:
  DoneTests() = default;
  // `nodes` and `rails` (the plan's) bound the indices Add accepts.
  DoneTests(uint32_t nodes, uint32_t rails) : nodes_(nodes), rails_(rails) {}
  void Reserve(size_t n) { keys_.reserve(n); }
  // OUT_OF_RANGE naming the test when an index is past the plan's, or the
  // round too large for a 64-bit key at this plan's size.
  absl::Status Add(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail);
  void Seal();  // sorts; a test added twice counts once
  bool Contains(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) const;
  size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }
  bool sealed() const { return sealed_; }

 private:
  // false when the test cannot have a key (an index past the plan's).
  bool Key(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail, uint64_t* key) const;
  uint64_t nodes_ = 0, rails_ = 0;
  std::vector<uint64_t> keys_;
  bool sealed_ = false;
};

class SweepRunner {
 public:
  SweepRunner(const Plan& plan, PairTester& tester, RunnerOptions options)
      : plan_(plan), tester_(tester), options_(std::move(options)) {}

  // Runs every test not in `already_done`. Returns the first on_result error
  // (the sweep stops after that round), CANCELLED (see above), the schedule's
  // validation error, FAILED_PRECONDITION for a non-empty `already_done` not
  // sealed (nothing runs), else OK.
  absl::Status Run(const DoneTests& already_done = {});

 private:
  const Plan& plan_;
  PairTester& tester_;
  RunnerOptions options_;
};

}  // namespace gdrbench::controller::run
