// PairTester: runs one pair test and returns its PairResult. A failed test is
// data (status + reason in the result), never an error of the call.
//
// AgentPairTester is the real one, over AgentApi: OpenTarget on the target's
// agent, RunWriteSweep on the initiator's, VerifyTarget when params.verify,
// CloseTarget always once a target was opened. Each RPC has a deadline (the
// AgentApi's for unary calls, `sweep_timeout` for the stream).
// Thread safety: Run may be called concurrently for disjoint NICs.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/run/agent_api.h"
#include "controller/run/plan.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

struct PairTestSpec {
  const Plan* plan = nullptr;
  schedule::Test test;
  uint32_t round = 0;
};

class PairTester {
 public:
  virtual ~PairTester() = default;
  // Fills status, reason, sizes, summary, duration; the caller fills the
  // endpoints, round, attempts and expected rate (see FillIdentity).
  virtual void Run(const PairTestSpec& spec, v1::PairResult* result) = 0;
};

// Fills src/dst endpoints, rail, round and expected_gbps of `result` from the plan.
void FillIdentity(const PairTestSpec& spec, v1::PairResult* result);

// Bidirectional tests with verify: copies the initiator's check of the
// reverse direction (summary.reverse_checks) onto reverse_sizes (verified,
// first bad offset; a mismatch also fails that size).
void ApplyReverseChecks(v1::PairResult* result);

struct AgentPairTesterOptions {
  std::chrono::milliseconds sweep_timeout{120000};
  // After this many consecutive UNAVAILABLE answers an agent is taken as
  // down: its later tests fail at once with the first reason (0 = never).
  uint32_t down_after_unavailable = 2;
};

class AgentPairTester final : public PairTester {
 public:
  // `agents[i]` serves plan node i; not owned, must outlive the tester.
  AgentPairTester(std::vector<AgentApi*> agents, AgentPairTesterOptions options);
  void Run(const PairTestSpec& spec, v1::PairResult* result) override;

 private:
  // Records an UNAVAILABLE from node i; returns true when i counts as down.
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
};

}  // namespace gdrbench::controller::run
