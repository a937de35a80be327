// What sweep.cc's steps share across its files: the config resolved, the
// agents' clients, the collector of results and the run's journal. Not part
// of the library's interface (sweep.h is).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/matrix.h"
#include "controller/run/grpc_agent_api.h"
#include "controller/run/journal.h"
#include "controller/sweep/sweep.h"
#include "google/protobuf/timestamp.pb.h"

namespace gdrbench::controller::sweep {
namespace internal {

// The config resolved: link-rate override applied, memory chosen, params
// carrying memory and direction.
struct Resolved {
  inventory::Inventory inventory;
  std::string memory;
  v1::SweepParams params;
};

// Resolve's checks of the config, before any agent is asked.
absl::StatusOr<Resolved> Resolve(const SweepConfig& c);

// run::MakePlan with, in modes cover and shift, the rounds planned on
// c.fabric over `nodes` (`infos`, when the agents answered, match rails by
// their port GUIDs and netdevs) and plan.fabric set. INVALID_ARGUMENT for
// those modes without a topology, a topology with another mode, or as
// PlanOnFabric and MakePlan.
// `fabric_run` (may be null): what the fabric plan was made over, for the
// isolation after the first pass.
absl::StatusOr<run::Plan> MakeSweepPlan(const SweepConfig& c, std::vector<run::PlanNode> nodes,
                                        const std::string& memory, const v1::SweepParams& params,
                                        const std::vector<v1::NodeInfo>* infos,
                                        std::shared_ptr<const FabricRun>* fabric_run = nullptr);

// gRPC clients for the inventory's nodes, or the agents the caller gave.
struct Agents {
  Agents() = default;
  Agents(Agents&&) = default;
  Agents& operator=(Agents&&) = default;
  ~Agents();  // logs how many channels were opened, and at most at once

  std::shared_ptr<AgentChannels> channels;  // owned's, shared; null with the caller's agents
  std::vector<std::unique_ptr<run::GrpcAgentApi>> owned;
  std::vector<run::AgentApi*> api;
};

absl::StatusOr<Agents> ConnectAgents(const SweepConfig& c, const inventory::Inventory& inv);

// Nodes found by DNS are counted once their agents have named them.
bool HasDiscovered(const inventory::Inventory& inv);

// Nodes found by DNS take their agents' hostnames as names; one agent
// reached at two addresses is one node.
absl::Status NameDiscovered(const SweepConfig& c, inventory::Inventory* inv,
                            std::vector<run::AgentApi*>* agents);

// What the agents are asked to check: the inventory's expectations, each
// field replaced by the config's when the config sets it.
v1::PreflightExpectations MergedAgentExpectations(const inventory::Expectations& inv,
                                                  const v1::PreflightExpectations& config);

// Why the plan's analysis reads every pair ("--mode incast groups every
// pair by its target", "a --memory list judges each pair's memory
// halves"); "" when the matrices and the flagged pairs are enough.
std::string WhyEveryPair(const run::Plan& plan);

// Everything one RunSweep call accumulates while tests finish.
class Collector {
 public:
  Collector(const run::Plan& plan, const SweepConfig& config, const SweepHooks& hooks)
      : config_(config),
        hooks_(hooks),
        matrices_(Names(plan), plan.schedule_options.bidirectional),
        coverage_(plan.fabric),
        every_pair_(!WhyEveryPair(plan).empty()) {}
  void set_journal(run::JournalWriter* journal) { journal_ = journal; }

  // Called by the runner from its workers at once: the journal (before the
  // result counts as done).
  absl::Status Record(const v1::PairResult& r, const schedule::Test& t) {
    return journal_ != nullptr ? journal_->Append(r, t.src, t.dst) : absl::OkStatus();
  }
  // Called by the runner, serialized, after Record succeeded (`t`: the
  // plan's node indices, the matrices' too).
  absl::Status OnResult(const v1::PairResult& r, const schedule::Test& t) {
    matrices_.Add(r, t.src, t.dst);
    if (r.status() == v1::RESULT_STATUS_OK) {
      uint64_t payload = 0;
      for (const v1::SizeResult& size : r.sizes()) payload += size.size_bytes() * size.iterations();
      coverage_.Measured(t, payload);
    }
    if (Keep(r)) pairs_.push_back(r);
    if (hooks_.on_result) hooks_.on_result(r);
    return absl::OkStatus();
  }
  // A result from the journal (resume): not journaled again, not reported;
  // the whole PairResult only with keep_pairs (KeepResumed).
  void Take(const analysis::MeasuredTest& m, uint32_t src, uint32_t dst) {
    matrices_.Add(m, src, dst);
    if (m.status == v1::RESULT_STATUS_OK) {
      schedule::Test t{src, dst, m.rail};
      if (m.dst_rail != m.rail) t.dst_rail = m.dst_rail;
      coverage_.Measured(t, 0);  // measured before this process read the switch counters
    }
  }
  void KeepResumed(const v1::PairResult& r) {
    if (Keep(r)) pairs_.push_back(r);
  }
  // A run streamed from the journal (StreamedRun) keeps, of its pairs, only
  // those its link counters flag (analysis::FlagLinks needs them for the
  // matrices' reasons and the summary): a few, not every pair.
  void set_streamed(bool streamed) { streamed_ = streamed; }
  bool streamed() const { return streamed_; }

  analysis::MatrixSet& matrices() { return matrices_; }
  std::vector<v1::PairResult>& pairs() { return pairs_; }
  const CoverageTally& coverage() const { return coverage_; }

 private:
  // Every pair of a run kept whole whose record (keep_pairs) or analysis
  // (incast, --memory lists) needs them; otherwise only the pairs the link
  // counters flag, which the matrices' reasons and the summary need whether
  // or not the run records its pairs (AssembleRun drops them then).
  bool Keep(const v1::PairResult& r) const {
    if (!streamed_ && (config_.keep_pairs || every_pair_)) return true;
    return !analysis::LinkFlag(r, config_.policy).empty();
  }
  static std::vector<std::string> Names(const run::Plan& plan) {
    std::vector<std::string> names;
    for (const auto& n : plan.nodes) names.push_back(n.name);
    return names;
  }

  const SweepConfig& config_;
  const SweepHooks& hooks_;
  run::JournalWriter* journal_ = nullptr;
  analysis::MatrixSet matrices_;
  CoverageTally coverage_;
  std::vector<v1::PairResult> pairs_;
  bool every_pair_;  // the analysis reads every pair (incast, --memory lists)
  bool streamed_ = false;
};

// The journal of this run: a new one, or the interrupted one reopened.
struct Journal {
  v1::JournalHeader header;
  std::unique_ptr<run::JournalWriter> writer;  // null: no journal
  run::DoneTests done;                         // every resumed test
};

// The journal of this run: a new one (a new run id unless the config names
// one), or with c.resume the interrupted one reopened and streamed into
// `collect`.
absl::StatusOr<Journal> OpenJournal(const SweepConfig& c, const run::Plan& plan, Collector& collect);

google::protobuf::Timestamp Now();

}  // namespace internal
}  // namespace gdrbench::controller::sweep
