// A whole sweep as a library call: agents, preflight fan-out, plan,
// journal, every pair test in rounds, outlier retests, verdicts and blame,
// returned as one v1::Run. Used by `gdrbench sweep` and gdrbench-server.
//
//   sweep::SweepConfig config;
//   config.inventory = *inventory::LoadInventoryFile("cluster.yaml");
//   config.journal_path = "/var/lib/gdrbench/run.journal";
//   run::CancelToken cancel;                 // cancel.Cancel() from any thread
//   sweep::SweepHooks hooks;
//   hooks.cancel = &cancel;
//   hooks.on_progress = [](const sweep::SweepProgress& p) { ... };
//   absl::StatusOr<v1::Run> run = sweep::RunSweep(config, hooks);
//   // then report::WriteReports(*run, dir), store it, ...
//
// What it does not do: parse flags, print, or touch any file but the
// journal (inventory, baseline and reports are read and written by the
// caller). Defaults are those of `gdrbench sweep` (common/sweep_limits.h); a
// v1.SweepSpec becomes a SweepConfig with ConfigFromSpec (spec.h).
//
// Threads: RunSweep blocks its caller and runs tests on up to
// `config.parallel` threads it owns (the caller's included); it returns only
// when they have all stopped. Hooks are called on those threads, one call at
// a time (never concurrently with each other), and must not block long: a
// slow on_progress slows the sweep. Several RunSweep calls may run at once in
// one process (they share nothing), but two sweeps over the same fabric
// disturb each other's numbers: the caller serializes them.
//
// Cancellation: hooks.cancel->Cancel() from any thread. No new test starts;
// tests already running finish (each RPC has a deadline: at most
// `sweep_timeout` plus the unary timeouts) and close their targets; what
// they produced is journaled; the journal is flushed; RunSweep returns
// CANCELLED saying how many tests finished. A resume (same config,
// resume = true) continues from there.
//
// Errors (the status of RunSweep); everything else is data in the Run:
//   INVALID_ARGUMENT  a bad config (fewer than 2 nodes outside --mode pairs,
//                     an unknown memory kind, a pair index out of range, gpu
//                     memory on a rail without a GPU, no sizes, ...), a
//                     malformed agent address or TLS setting, a baseline run
//                     without matrices, or a resume journal written for
//                     another plan;
//   NOT_FOUND / DATA_LOSS   resume: the journal is missing / corrupt;
//   INTERNAL / PERMISSION_DENIED  the journal cannot be created or written (a
//                     write failing mid-run stops the sweep after that round);
//   CANCELLED         see above;
//   FAILED_PRECONDITION  a schedule broke its invariant (a bug; nothing ran).
// A failed or slow test, an unreachable agent, a preflight FAIL: data (cells
// FAILED/ERROR/SKIPPED, nodes left out, blame), with Run.passed = false.
//
// Per-node results are keyed by the inventory's node names: Run.preflight[i]
// and Run.nodes[i] are inventory node i (after DNS naming), the report's
// `hostname` is that name, the NodeInfo's `hostname` the agent's own host
// (empty when the agent did not answer), so several agents on one host stay
// apart and every cell links to its node's findings.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/rpc/tls.h"
#include "common/sweep_limits.h"
#include "controller/analysis/uniformity.h"
#include "controller/inventory/inventory.h"
#include "controller/run/agent_api.h"
#include "controller/run/cancel.h"
#include "controller/run/journal.h"
#include "controller/run/plan.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/fabric_plan.h"
#include "controller/sweep/params.h"
#include "controller/sweep/regressed.h"
#include "controller/sweep/streamed_run.h"
#include "gdrbench/v1/controller.pb.h"
#include "gdrbench/v1/preflight.pb.h"
#include "gdrbench/v1/run.pb.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::controller::sweep {

// What a test of this fabric really costs, measured by an earlier run: the
// set-up of a test (its duration minus its sizes' wire time: RPCs,
// connection, registration, warm-up, verify) and the bandwidth its tests
// moved. The duration estimate (--dry-run, the default sweep timeout) uses
// it instead of kDefaultSetupSeconds and the link rate.
struct MeasuredCost {
  double setup_s = 0;
  double gbps = 0;
  size_t tests = 0;          // OK tests it was measured over
  std::string source;        // the run's file, for the plan's text
};
// Per-test set-up when no earlier run says better (docs/architecture.md).
using sweep_limits::kDefaultSetupSeconds;
// NOT_FOUND when the run has no OK test with measured sizes (a run kept
// without pairs, or one where nothing ran).
absl::StatusOr<MeasuredCost> MeasureCost(const v1::Run& run);

struct SweepConfig {
  // Nodes: names, agent addresses, rails, link rates, default memory and TLS
  // (inventory::LoadInventoryFile, InventoryFromHostlist, InventoryFromAgents).
  inventory::Inventory inventory;

  // Schedule: mode, direction, quick matchings and seed, the cap per round;
  // mode kPairs: `pairs` as indices into inventory.nodes (ParsePairList).
  schedule::ScheduleOptions schedule;
  // Modes cover and shift: the topology their rounds are planned on (after
  // the preflight, over the nodes left in, rails matched with the agents'
  // port GUIDs and netdevs; fabric_plan.h). Required by those modes, refused
  // by the others.
  std::shared_ptr<const FabricInput> fabric;
  // With `fabric`: the switch port counters (v1.SwitchCounters JSON, run.proto)
  // read before the first test and after the last; Run.coverage says what they
  // showed per cable (cable_counters.h). Unset: none read. A read that fails
  // is recorded (coverage.counters_error), and nothing is proven by counters.
  std::function<absl::StatusOr<std::string>()> cable_counters;
  std::string cable_counters_source;  // for messages: "`fabric counters`"

  // Test parameters: sizes, iterations or duration, warm-up, QPs, tx depth,
  // verify, seed (the run's: 0 = drawn when it starts; each test's derived
  // from it, run::TestSeed), sl and tclass (unset: the inventory's qos:).
  // `memory` and `bidirectional` are set from the fields below and
  // schedule.bidirectional.
  v1::SweepParams params = DefaultParams();
  std::string memory;        // host | hugepage | gpu | gpu-staged; empty = inventory.memory
  double link_gbps = 0;      // > 0: every port's expected rate, overriding the agents'

  // Verdicts: absolute, fleet-relative, baseline (analysis/verdicts.h).
  v1::VerdictPolicy policy = DefaultPolicy();
  std::shared_ptr<const v1::Run> baseline;  // a previous run; policy.baseline_run names it

  // Agents. TLS: unset = the inventory's tls: section when it has one, else
  // TLS with the system roots.
  std::optional<rpc::ClientTlsConfig> tls;
  std::chrono::milliseconds rpc_timeout{sweep_limits::kDefaultRpcTimeoutMs};  // every unary RPC
  std::chrono::milliseconds connect_timeout{sweep_limits::kDefaultConnectTimeoutMs};  // an agent not there fails within this
  // Non-empty: agents[i] serves inventory node i (not owned; must outlive the
  // call), instead of gRPC clients made from the addresses: tests, benches,
  // a server that pools its channels.
  std::vector<run::AgentApi*> agents;

  // Running.
  uint32_t parallel = sweep_limits::kDefaultParallel;      // concurrent tests (and preflights) at most
  uint32_t retries = sweep_limits::kDefaultRetries;        // extra attempts for a test that is not OK
  uint32_t retest_low = sweep_limits::kDefaultRetestLow;   // outlier retest passes over the low cells' tests
  // Regressions (confirmation before blame): gdrbench-server's references of
  // one same-rail verdict matrix (Controller.GetLinkReferences), asked once
  // per matrix after the first pass when retest_low > 0. A cell regressed
  // against them is retested in the first retest pass, with two partner
  // tests (regressed.h), and marked retested, so the finding the server
  // makes of it says "confirmed by a retest", or the retest clears it.
  // Unset (no server): no history to judge by; the log says regressed cells
  // are not retested. A failed call is logged and the retest goes on
  // without them (the findings then say "seen once").
  LinkReferencesFn link_references;
  std::chrono::milliseconds sweep_timeout{0};  // per RunWriteSweep; 0 = estimate x 4 + 30 s

  // Preflight before the first test; nodes that FAIL are left out unless `force`.
  bool preflight = true;
  bool force = false;
  // Nodes without inventory rails: false tests their GPU rails (GetNodeInfo's
  // rail map), true every active NIC (`--nics all`; see run::ProbeOptions).
  bool all_nics = false;
  v1::PreflightExpectations expectations;

  // Journal: every finished test, so a crashed or cancelled run can continue.
  // Empty: no journal (nothing survives a crash). resume = true: journal_path
  // holds an interrupted run of this very plan; its tests are not run again
  // and its run id is kept.
  std::string journal_path;
  bool resume = false;
  run::JournalWriter::Options journal_options;

  std::string run_id;        // empty = "YYYYmmdd-HHMMSS-xxxx" (UTC); ignored on resume
  // false: Run.pairs stays empty (at 1024 nodes x 8 rails it is 8.4 M
  // messages); the matrices, blame and summary are complete either way, and
  // hooks.on_result sees every pair. RunSweepStreamed reads them back from
  // the journal instead of holding them.
  bool keep_pairs = true;
  // Set: the estimate (and the default sweep timeout) from an earlier run.
  std::optional<MeasuredCost> measured;

  // The test parameters of a sweep whose request leaves them out
  // (common/sweep_limits.h): 64K and 1M, 1000 iterations, 1 QP, tx depth
  // 128, post list 1, QP timeout 14, seed 0 (drawn per run), cm auto.
  static v1::SweepParams DefaultParams();
  static v1::VerdictPolicy DefaultPolicy();
};

enum class Phase { kProbe, kTests, kRetest, kAnalysis };
const char* PhaseName(Phase phase);  // "probe", "tests", "retest", "analysis"

struct SweepProgress {
  Phase phase = Phase::kProbe;
  uint32_t retest_pass = 0;  // 1, 2, ... during kRetest
  run::Progress tests;       // counters of the schedule now running (kTests, kRetest)
};

// What is known once the plan is made, before the first test.
struct SweepStart {
  const std::string& run_id;
  const run::Plan& plan;     // nodes (with exclusions), schedule, params
  size_t resumed_tests;      // taken from the journal
};

struct SweepHooks {
  std::function<void(const SweepStart&)> on_start;
  // After each finished test, and once at each phase change.
  std::function<void(const SweepProgress&)> on_progress;
  // Each finished test (first passes and retests), after it is journaled.
  std::function<void(const v1::PairResult&)> on_result;
  const run::CancelToken* cancel = nullptr;  // not owned; may be null
  // A line about what the sweep decided that its caller shows: the
  // regression retest's references and cells (regressed.h), or that there is
  // no server to ask. Unset: logged at info.
  std::function<void(const std::string&)> on_note;
};

absl::StatusOr<v1::Run> RunSweep(const SweepConfig& config, const SweepHooks& hooks = {});

// The same sweep, its run held as a StreamedRun (streamed_run.h): the
// header, the compact matrices and the journal, not every PairResult and
// MatrixCell (a 1024 x 8 run in a few hundred MB instead of gigabytes);
// with keep_pairs only the pairs the link counters flag stay in memory
// while it runs. Its run.json, chunks and Materialize() are those of
// RunSweep's run. Kept whole instead, and said in a warning in the log:
// a config without journal_path, --mode incast and --memory lists (their
// analysis reads every pair). Errors as RunSweep.
absl::StatusOr<StreamedRun> RunSweepStreamed(const SweepConfig& config, const SweepHooks& hooks = {});

// The plan from the inventory alone, contacting no agent (a dry run): nodes
// without rails in the inventory get one rail with an empty NIC ("auto").
// INVALID_ARGUMENT as RunSweep.
absl::StatusOr<run::Plan> PlanWithoutAgents(const SweepConfig& config);

// The preflight fan-out alone, for `gdrbench preflight --inventory|--agents|
// --hostlist`: every node's info and preflight in parallel (up to
// config.parallel), the fleet expectations checked (the inventory's, with
// config.expectations' fields over them), and the fleet's version spread.
// Nothing is left out of the result: a node that would be left out of a
// sweep has its PlanNode::excluded_reason. Errors: INVALID_ARGUMENT for an
// empty inventory, a malformed agent address or TLS setting; a DNS entry
// whose agents do not answer drops out as in RunSweep.
struct FleetPreflight {
  run::ProbeResult probe;  // inventory order; keyed by the inventory's node names
  std::vector<analysis::VersionSpread> uniformity;
  size_t answering = 0;    // nodes whose agent answered GetNodeInfo
};
absl::StatusOr<FleetPreflight> RunFleetPreflight(const SweepConfig& config);

// Where the tests' service level and traffic class come from, for the
// plan's text and the log: "service level 3 (the inventory's qos.sl),
// traffic class 106 (--tclass, over the inventory's qos.tclass 96)"; empty
// when neither the params nor the inventory set them. `names` names the
// params' fields (the flags, for the CLI).
std::string DescribeQos(const SweepConfig& config, const FieldNames& names = kSpecFields);

// The inputs of the duration estimate (schedule::EstimateScheduleSeconds).
schedule::EstimateParams Estimate(const SweepConfig& config);

}  // namespace gdrbench::controller::sweep
