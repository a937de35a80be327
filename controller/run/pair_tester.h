// One pair test, the agent protocol written once: OpenTarget on the target's
// agent, RunWriteSweep on the initiator's, VerifyTarget when the params ask
// for verify or the test is bidirectional (it returns the target's own
// direction), CloseTarget always once a target was opened. `gdrbench pair`
// calls RunPairTest directly; the sweep calls it through AgentPairTester.
//
// A failed test is data (status + reason in the result), never an error of
// the call:
//   FAILED  the test ran and failed: a completion error on some size, a data
//           mismatch (verify), RunWriteSweep past its deadline;
//   ERROR   the test could not run: OpenTarget or VerifyTarget refused or
//           unanswered, a stream without a summary, the agent down.
// Reasons name the RPC and the side ("OpenTarget on node3: ..."); every bad
// size is listed, with the offset of the first bad byte for a mismatch.
// Thread safety: RunPairTest and AgentPairTester::Run may be called
// concurrently for disjoint NICs.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "controller/run/agent_api.h"
#include "controller/run/plan.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

// One side of a pair test. The views must outlive the call.
struct PairSide {
  AgentApi* agent = nullptr;
  absl::string_view name;          // in reasons: the node name, or the agent's address
  absl::string_view device;        // RDMA device on that agent
  absl::string_view bind_address;  // rdma_cm address; empty = the device's first IPv4
  absl::string_view memory;        // "host", "hugepage", "gpu:3", "gpu-staged:0"
};

struct PairTestOptions {
  // Bounds the whole RunWriteSweep stream.
  std::chrono::milliseconds sweep_timeout{120000};
  // The target's lease. 0 = sweep_timeout + 60 s: it outlives the sweep's
  // deadline, so only a vanished controller leaves the agent to reclaim it.
  std::chrono::milliseconds lease{0};
  // Nonzero: every call with this id passes the same `params` (one plan's,
  // Plan::id), so this thread's requests keep their copy of them between
  // tests instead of copying them again. 0: copied for every test.
  uint64_t params_id = 0;
  // Tests with verify: the pattern seed sent to both agents and recorded in
  // PairResult.verify_seed. 0: params.seed() when it is not 0, else one drawn
  // at random for this test.
  uint64_t verify_seed = 0;
};

// A seed derived from `base` and `salt` (splitmix64's finaliser over both,
// a bijection of the salt for one base), never 0.
uint64_t DeriveSeed(uint64_t base, uint64_t salt);
// A sweep test's verify seed: the run's seed (Run.params.seed) with the
// test's identity (initiator, target, rails, round) and attempt, so every
// test of a run, each retry and each retest pass gets its own.
uint64_t TestSeed(uint64_t run_seed, const schedule::Test& test, uint32_t round, uint32_t attempt);

// Runs one test of `params` (sizes, iterations, qps, verify, seed; memory
// and direction come from the sides and `bidirectional`). Fills status,
// reason, sizes, reverse_sizes, summary, started_at, duration_ns and both
// endpoints' memory_kind/registration (what the agents really used); the
// caller fills the identity (nodes, NICs, rail, round). `on_answer(target,
// status)`, when given, sees every RPC answer of each side (agent health).
// Returns the first RPC that failed, OK when every RPC answered (whatever the
// test's outcome): a caller tells an agent's INVALID_ARGUMENT (bad
// parameters) from a failed link with it.
absl::Status RunPairTest(const PairSide& initiator, const PairSide& target,
                         const v1::SweepParams& params, bool bidirectional,
                         const PairTestOptions& options, v1::PairResult* result);
absl::Status RunPairTest(const PairSide& initiator, const PairSide& target,
                         const v1::SweepParams& params, bool bidirectional,
                         const PairTestOptions& options, v1::PairResult* result,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer);

class HeldSweep;  // pair_stream.h

// A target opened ahead of its test's data phase (the runner opens the next
// round's while this round's data moves: runner.h). `status` is OpenTarget's
// answer; when it is OK the agent holds the target until RunPairTest with it
// or ClosePreparedTarget closes it (or its lease ends). With `held`, the
// initiator is connected too, waiting for RunPairTest to start it.
struct PreparedTarget {
  PreparedTarget();
  ~PreparedTarget();
  absl::Status status = absl::UnknownError("not opened");
  v1::OpenTargetResponse opened;
  uint64_t seed = 0;  // the pattern seed OpenTarget was given
  std::unique_ptr<HeldSweep> held;  // after `opened`, which it reads
};

// The lease of a target opened ahead: it waits up to one test (the test whose
// data phase it overlaps) before its own runs, so it is sweep_timeout longer
// than a target opened at once (PairTestOptions::lease), unless one is given.
std::chrono::milliseconds PreparedLease(const PairTestOptions& options);

// OpenTarget for the test RunPairTest would run with these arguments, its
// answer into `prepared` (on_answer sees it, as in RunPairTest).
void OpenPairTarget(const PairSide& target, const v1::SweepParams& params, bool bidirectional,
                    const PairTestOptions& options, PreparedTarget* prepared,
                    absl::FunctionRef<void(bool target, const absl::Status&)> on_answer);

// OpenPairTarget with hold_start, and, when the target's agent holds
// (start_held), the initiator's RunWriteSweep started at once on a thread of
// its own (HeldSweep): it connects while other tests may move data on these
// NICs and sends nothing until RunPairTest starts it. on_answer sees every
// RPC answer of that stream too, from its thread.
void ConnectPairAhead(const PairSide& initiator, const PairSide& target, const v1::SweepParams& params,
                      bool bidirectional, const PairTestOptions& options, double expected_gbps,
                      PreparedTarget* prepared,
                      std::function<void(bool target, const absl::Status&)> on_answer);

// RunPairTest with the target `prepared` opened (null: as RunPairTest). A
// failed OpenTarget is this test's ERROR, with its reason; an opened target
// is used, then closed, whatever happens. A held initiator is started
// (ConnectTarget with start: the data phase begins; refused: this test's
// ERROR naming "ConnectTarget (start)"). The duration is from this call: the
// test's time on its NICs, not the set-up done ahead.
absl::Status RunPairTest(const PairSide& initiator, const PairSide& target, const v1::SweepParams& params,
                         bool bidirectional, const PairTestOptions& options, v1::PairResult* result,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer,
                         PreparedTarget* prepared);

// Closes a prepared target whose test will not run (a cancelled sweep), its
// held initiator stopped first (no data moves); a target whose OpenTarget
// failed needs nothing.
void ClosePreparedTarget(const PairSide& target, PreparedTarget& prepared,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer);

struct PairTestSpec {
  const Plan* plan = nullptr;
  schedule::Test test;
  uint32_t round = 0;
  uint32_t attempt = 1;  // 1 for the first, 2 for the first retry, ...
};

// What a tester set up ahead for one test (PairTester::Prepare).
class PreparedTest {
 public:
  virtual ~PreparedTest() = default;
};

class PairTester {
 public:
  virtual ~PairTester() = default;
  // Fills status, reason, sizes, summary, duration; the caller fills the
  // endpoints, round, attempts and expected rate (see FillIdentity).
  virtual void Run(const PairTestSpec& spec, v1::PairResult* result) = 0;
  // The test's set-up, done ahead of its data phase, on another thread and
  // while other tests (on the same NICs too) move data: null when this tester
  // sets up nothing ahead (the default) or not for this test. Must not move
  // data. May be called concurrently with Run and with itself.
  virtual std::unique_ptr<PreparedTest> Prepare(const PairTestSpec& spec) {
    (void)spec;
    return nullptr;
  }
  // Run with what Prepare made for `spec` (null: Run). Whatever the outcome,
  // what was prepared is released. A failure of the set-up is this test's.
  virtual void RunPrepared(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared,
                           v1::PairResult* result) {
    (void)prepared;
    Run(spec, result);
  }
  // Releases what Prepare made for a test that will not run.
  virtual void Discard(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared) {
    (void)spec;
    (void)prepared;
  }
};

// Fills src/dst endpoints, rail, round and expected_gbps of `result` from the
// plan. Incast plans hold a sender to min(its port, the target's port / K).
void FillIdentity(const PairTestSpec& spec, v1::PairResult* result);

// Sets `result` aside for its next test (a result reused test after test,
// clear_keeping.h): its summary and start time become this thread's spares,
// and the next RunPairTest on this thread fills them instead of
// allocating new ones (a heap message's Clear() deletes its sub-messages;
// kept attached, an empty summary would read as present). Then clear it.
void RecycleResult(v1::PairResult* result);

// Sets `result`'s started_at to now, in this thread's spare timestamp
// (RecycleResult) when it has none.
void SetStarted(v1::PairResult* result);

// Readies a result the runner reuses for its next test: RecycleResult, then
// cleared as Clear() does, but for its endpoints' identity (node, agent
// address, NIC, memory), which FillIdentity sets only where the next test's
// differ. FillIdentity must follow.
void ReadyForNextTest(v1::PairResult* result);

// The rate a test between ports of these link rates is held to: the slower
// one, or the known one when the other is unknown (0).
inline double ExpectedGbps(double src_gbps, double dst_gbps) {
  return src_gbps > 0 && dst_gbps > 0 ? std::min(src_gbps, dst_gbps) : std::max(src_gbps, dst_gbps);
}

// The rate test `t` of `plan` is held to (FillIdentity's expected_gbps):
// ExpectedGbps of its two ports' link rates, the target's shared by its
// senders in incast.
double TestExpectedGbps(const Plan& plan, const schedule::Test& t);

// Bidirectional tests with verify: copies the initiator's check of the
// reverse direction (summary.reverse_checks) onto reverse_sizes (verified,
// first bad offset; a mismatch also fails that size).
void ApplyReverseChecks(v1::PairResult* result);

struct AgentPairTesterOptions {
  PairTestOptions test;
  // After this many consecutive UNAVAILABLE answers an agent is taken as
  // down: its later tests fail at once with the first reason (0 = never).
  uint32_t down_after_unavailable = 2;
  // Prepare connects the initiator too (ConnectPairAhead), where the
  // target's agent holds its start; false: the target only (OpenPairTarget).
  bool connect_ahead = true;
  // At most this many initiators held ahead at once (each a thread and a
  // stream of the controller's: the default --parallel's worth); past it,
  // Prepare opens the target only.
  uint32_t max_held_ahead = 64;
};

// The sweep's tester: RunPairTest between plan nodes, with agent health.
class AgentPairTester final : public PairTester {
 public:
  // `agents[i]` serves plan node i; not owned, must outlive the tester.
  AgentPairTester(std::vector<AgentApi*> agents, AgentPairTesterOptions options);
  void Run(const PairTestSpec& spec, v1::PairResult* result) override;
  // OpenTarget on the test's target NIC (a plan of one memory kind, neither
  // agent down); its answer, failed or not, goes to RunPrepared.
  std::unique_ptr<PreparedTest> Prepare(const PairTestSpec& spec) override;
  void RunPrepared(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared,
                   v1::PairResult* result) override;
  void Discard(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared) override;

 private:
  // `prepared` may be null.
  void RunWith(const PairTestSpec& spec, PreparedTarget* prepared, v1::PairResult* result);
  PairTestOptions TestOptions(const PairTestSpec& spec) const;
  // Records an answer from node i; UNAVAILABLE ones count towards "down".
  void NoteAnswer(uint32_t node, const absl::Status& st);
  bool IsDown(uint32_t node, std::string* why);

  std::vector<AgentApi*> agents_;
  AgentPairTesterOptions options_;
  struct Health {
    std::atomic<uint32_t> unavailable{0};
    std::atomic<bool> down{false};
    std::mutex mu;
    std::string reason;
  };
  std::unique_ptr<Health[]> health_;
  std::atomic<uint32_t> held_ahead_{0};  // initiators held by Prepare, not yet run or discarded
};

}  // namespace gdrbench::controller::run
