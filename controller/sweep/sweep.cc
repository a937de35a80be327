#include "controller/sweep/sweep.h"

#include <algorithm>
#include <ctime>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "controller/analysis/gdr.h"
#include "controller/analysis/incast.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/verdicts.h"
#include "controller/run/discover.h"
#include "controller/run/expectations.h"
#include "controller/run/grpc_agent_api.h"
#include "controller/run/memory_kinds.h"
#include "controller/run/probe.h"
#include "controller/sweep/retest.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::sweep {
namespace {

std::string NewRunId() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return absl::StrFormat("%s-%04x", buf, rd() & 0xffff);
}

uint64_t DrawSeed() {
  std::random_device rd;
  const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return seed != 0 ? seed : 1;
}

google::protobuf::Timestamp Now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  google::protobuf::Timestamp t;
  t.set_seconds(ns / 1000000000);
  t.set_nanos(static_cast<int32_t>(ns % 1000000000));
  return t;
}

bool Cancelled(const SweepHooks& h) { return h.cancel != nullptr && h.cancel->cancelled(); }

// Nodes found by DNS are counted once their agents have named them.
bool HasDiscovered(const inventory::Inventory& inv) {
  return std::any_of(inv.nodes.begin(), inv.nodes.end(),
                     [](const inventory::Node& n) { return n.name_from_agent; });
}

// Nodes found by DNS take their agents' hostnames as names; one agent
// reached at two addresses is one node.
absl::Status NameDiscovered(const SweepConfig& c, inventory::Inventory* inv,
                            std::vector<run::AgentApi*>* agents) {
  if (!HasDiscovered(*inv)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<size_t> kept, run::NameDiscoveredNodes(inv, *agents, c.parallel));
  std::vector<run::AgentApi*> named;
  for (size_t i : kept) named.push_back((*agents)[i]);
  *agents = std::move(named);
  if (inv->nodes.size() < 2 && c.schedule.mode != schedule::Mode::kPairs) {
    std::vector<std::string> found;
    for (const auto& n : inv->nodes) found.push_back(absl::StrCat(n.name, " at ", n.address));
    return absl::InvalidArgumentError(absl::StrCat(inv->source, ": a sweep needs at least 2 nodes, got ",
                                                   inv->nodes.size(), " (", absl::StrJoin(found, ", "),
                                                   ")"));
  }
  return absl::OkStatus();
}

// What the agents are asked to check: the inventory's expectations, each
// field replaced by the config's when the config sets it.
v1::PreflightExpectations MergedAgentExpectations(const inventory::Expectations& inv,
                                                  const v1::PreflightExpectations& config) {
  v1::PreflightExpectations e = run::AgentExpectations(inv);
  v1::PreflightExpectations over = config;
  over.clear_rail_nics();
  e.MergeFrom(over);  // proto3 MergeFrom: set (non-empty) scalars win
  for (const auto& nic : config.rail_nics()) e.add_rail_nics(nic);
  return e;
}

// The config resolved: link-rate override applied, memory chosen, params
// carrying memory and direction.
struct Resolved {
  inventory::Inventory inventory;
  std::string memory;
  v1::SweepParams params;
};

// The inventory's qos: for what the params leave unset (a flag or the
// request's params win). Its service level cannot go over rdma_cm.
absl::Status ApplyInventoryQos(const inventory::Inventory& inv, v1::SweepParams* p) {
  if (!p->has_sl() && inv.qos.sl) {
    if (*inv.qos.sl != 0 && p->cm() == v1::CONNECTION_MODE_RDMA_CM) {
      return absl::InvalidArgumentError(absl::StrCat(
          inv.source, ": qos.sl ", *inv.qos.sl, " with rdma_cm: rdma_cm takes the service level from the "
          "path (InfiniBand) or the traffic class (RoCE); connect out of band, or give the service level 0"));
    }
    p->set_sl(*inv.qos.sl);
  }
  if (!p->has_tclass() && inv.qos.tclass) p->set_tclass(*inv.qos.tclass);
  return absl::OkStatus();
}

absl::StatusOr<Resolved> Resolve(const SweepConfig& c) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  Resolved r;
  r.inventory = c.inventory;
  const size_t n = r.inventory.nodes.size();
  if (n == 0) return bad(r.inventory.source, ": no nodes");
  if (n < 2 && c.schedule.mode != schedule::Mode::kPairs && !HasDiscovered(r.inventory)) {
    return bad(r.inventory.source, ": a sweep needs at least 2 nodes, got ", n);
  }
  if (!(c.link_gbps >= 0)) return bad("link rate ", c.link_gbps, " Gb/s: give 0 (the agents') or more");
  if (c.link_gbps > 0) {
    for (auto& node : r.inventory.nodes) node.link_gbps = c.link_gbps;
  }
  r.memory = c.memory.empty() ? r.inventory.memory : c.memory;
  // One kind, or a list run kind by kind on every pair (run/memory_kinds.h).
  ASSIGN_OR_RETURN(std::vector<std::string> kinds, run::SplitMemoryKinds(r.memory));
  for (const std::string& k : kinds) {
    if (k != "host" && k != "hugepage" && k != "gpu" && k != "gpu-staged") {
      return bad("memory: expected host, hugepage, gpu or gpu-staged, or a list of them (host,gpu), got '",
                 r.memory, "'");
    }
  }
  if (!c.agents.empty() && c.agents.size() != n) {
    return bad(c.agents.size(), " agents given for ", n, " inventory nodes");
  }
  if (c.parallel == 0) return bad("parallel must be at least 1");
  r.params = c.params;
  RETURN_IF_ERROR(ApplyInventoryQos(r.inventory, &r.params));
  if (r.params.sizes_bytes().empty()) return bad("no message sizes");
  if (r.params.qps() == 0) return bad("qps must be at least 1");
  r.params.set_memory(r.memory);
  r.params.set_bidirectional(c.schedule.bidirectional);
  const v1::VerdictPolicy& p = c.policy;
  for (double f : {p.min_fraction_of_link(), p.fleet_min_drop(), p.baseline_tolerance(),
                   p.max_retransmit_fraction()}) {
    if (!(f >= 0 && f <= 1)) return bad("verdict policy: fractions must be within 0 .. 1, got ", f);
  }
  if (!(p.mad_k() >= 0)) return bad("verdict policy: mad_k must be >= 0");
  if (!(p.min_gpu_host_ratio() >= 0 && p.min_gpu_host_ratio() <= 1)) {
    return bad("verdict policy: min_gpu_host_ratio must be within 0 .. 1, got ", p.min_gpu_host_ratio());
  }
  return r;
}

// gRPC clients for the inventory's nodes, or the agents the caller gave.
struct Agents {
  std::vector<std::unique_ptr<run::GrpcAgentApi>> owned;
  std::vector<run::AgentApi*> api;
};

absl::StatusOr<Agents> ConnectAgents(const SweepConfig& c, const inventory::Inventory& inv) {
  Agents a;
  if (!c.agents.empty()) {
    a.api = c.agents;
    return a;
  }
  rpc::ClientTlsConfig tls = c.tls ? *c.tls : inv.has_tls ? inv.tls : rpc::ClientTlsConfig{};
  for (const auto& node : inv.nodes) {
    AgentClientConfig cfg;
    cfg.address = node.address;
    cfg.tls = tls;
    cfg.rpc_timeout = c.rpc_timeout;
    cfg.connect_timeout = c.connect_timeout;
    auto api = run::GrpcAgentApi::Create(std::move(cfg));
    if (!api.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node.name, ": ", api.status().message()));
    }
    a.api.push_back(api->get());
    a.owned.push_back(std::move(*api));
  }
  return a;
}

// Everything one RunSweep call accumulates while tests finish.
class Collector {
 public:
  Collector(const run::Plan& plan, const SweepConfig& config, const SweepHooks& hooks)
      : config_(config), hooks_(hooks), matrices_(Names(plan), plan.schedule_options.bidirectional) {}
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
    if (config_.keep_pairs) pairs_.push_back(r);
    if (hooks_.on_result) hooks_.on_result(r);
    return absl::OkStatus();
  }
  // A result from the journal (resume): not journaled again, not reported;
  // the whole PairResult only with keep_pairs (KeepResumed).
  void Take(const analysis::MeasuredTest& m, uint32_t src, uint32_t dst) { matrices_.Add(m, src, dst); }
  void KeepResumed(const v1::PairResult& r) { pairs_.push_back(r); }

  analysis::MatrixSet& matrices() { return matrices_; }
  std::vector<v1::PairResult>& pairs() { return pairs_; }

 private:
  static std::vector<std::string> Names(const run::Plan& plan) {
    std::vector<std::string> names;
    for (const auto& n : plan.nodes) names.push_back(n.name);
    return names;
  }

  const SweepConfig& config_;
  const SweepHooks& hooks_;
  run::JournalWriter* journal_ = nullptr;
  analysis::MatrixSet matrices_;
  std::vector<v1::PairResult> pairs_;
};

// The journal of this run: a new one, or the interrupted one reopened.
struct Journal {
  v1::JournalHeader header;
  std::unique_ptr<run::JournalWriter> writer;  // null: no journal
  run::DoneTests done;                         // every resumed test
};

uint32_t MaxRails(const run::Plan& plan) {
  size_t rails = 1;
  for (const auto& n : plan.nodes) rails = std::max({rails, n.rails.size(), n.rail_gbps.size()});
  return static_cast<uint32_t>(rails);
}

// Resume: the journal streamed (nothing of it held but the matrices'
// cells, the finished tests' keys and, with keep_pairs, the pairs), each
// finished test handed to `collect`. Without keep_pairs no PairResult is
// built (JournalVisitor::on_measured).
absl::Status ReadResumed(const SweepConfig& c, const run::Plan& plan, Collector& collect, Journal* j) {
  j->done = run::DoneTests(static_cast<uint32_t>(plan.nodes.size()), MaxRails(plan));
  run::JournalVisitor v;
  v.on_start = [&](const run::JournalSummary& s) -> absl::Status {
    if (s.header.plan_fingerprint() != plan.fingerprint) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resume ", c.journal_path, ": the journal was written for plan ", s.header.plan_fingerprint(),
          ", this sweep makes plan ", plan.fingerprint,
          ": resume with the same inventory and options (and the same nodes answering)"));
    }
    j->done.Reserve(s.header.tests());
    return absl::OkStatus();
  };
  if (c.keep_pairs) {
    v.on_test = [&](const v1::PairResult& p, uint32_t, uint32_t) {
      collect.KeepResumed(p);
      return absl::OkStatus();
    };
  }
  v.on_measured = [&](const run::FinishedTest& t) -> absl::Status {
    uint32_t src = t.src, dst = t.dst;
    if (src == run::kNoNodeIndex) {  // format 1: by name
      const std::string src_node(t.src_node), dst_node(t.dst_node);
      const int s = collect.matrices().NodeIndex(src_node), d = collect.matrices().NodeIndex(dst_node);
      if (s < 0 || d < 0) {
        return absl::DataLossError(absl::StrCat("resume ", c.journal_path, ": a test of ", src_node, " -> ",
                                                dst_node, ", a node outside this plan"));
      }
      src = static_cast<uint32_t>(s);
      dst = static_cast<uint32_t>(d);
    }
    collect.Take(t.measured, src, dst);
    const absl::Status added = j->done.Add(t.round, src, dst, t.measured.rail, t.measured.dst_rail);
    return added.ok() ? added
                      : absl::DataLossError(absl::StrCat("resume ", c.journal_path, ": ", added.message()));
  };
  ASSIGN_OR_RETURN(run::JournalSummary in, run::StreamJournal(c.journal_path, v));
  j->done.Seal();
  j->header = std::move(in.header);
  ASSIGN_OR_RETURN(j->writer, run::JournalWriter::Reopen(c.journal_path, in.valid_bytes, run::DescribePlan(plan),
                                                         c.journal_options));
  spdlog::info("resuming run {}: {} tests already done{}", j->header.run_id(), in.tests,
               in.torn_tail ? absl::StrCat(" (a torn last record of ", in.dropped_bytes, " bytes was dropped)") : "");
  return absl::OkStatus();
}

absl::StatusOr<Journal> OpenJournal(const SweepConfig& c, const run::Plan& plan, Collector& collect) {
  Journal j;
  if (c.resume) {
    if (c.journal_path.empty()) return absl::InvalidArgumentError("resume: no journal path given");
    RETURN_IF_ERROR(ReadResumed(c, plan, collect, &j));
    return j;
  }
  j.header.set_run_id(c.run_id.empty() ? NewRunId() : c.run_id);
  j.header.set_plan_fingerprint(plan.fingerprint);
  *j.header.mutable_started_at() = Now();
  j.header.set_mode(schedule::ModeName(plan.schedule_options.mode));
  *j.header.mutable_params() = plan.params;
  for (const auto& n : plan.nodes) j.header.add_nodes(n.name);
  j.header.set_tests(plan.schedule.tests());
  if (!c.journal_path.empty()) {
    ASSIGN_OR_RETURN(j.writer,
                     run::JournalWriter::Create(c.journal_path, j.header, run::DescribePlan(plan),
                                                c.journal_options));
  }
  return j;
}

void Report(const SweepHooks& h, Phase phase, uint32_t pass = 0, const run::Progress* p = nullptr) {
  if (!h.on_progress) return;
  SweepProgress sp;
  sp.phase = phase;
  sp.retest_pass = pass;
  if (p != nullptr) sp.tests = *p;
  h.on_progress(sp);
}

// The cells of the first pass that regressed against the server's
// references (regressed.h), and their partners; none without a server
// (said in the log), in incast runs (a cell's rate depends on its group) or
// without retests.
RegressedCells FindRegressedCells(const SweepConfig& c, const SweepHooks& h, const run::Plan& plan,
                                  const analysis::MatrixSet& matrices) {
  auto note = [&h](const std::string& line) {
    if (h.on_note) {
      h.on_note(line);
    } else {
      spdlog::info("{}", line);
    }
  };
  if (c.retest_low == 0 || plan.schedule_options.mode == schedule::Mode::kIncast) return {};
  if (!c.link_references) {
    note(
        "regressions: no server to ask for each link's baseline and history (--server): cells that regressed "
        "are not retested, only low ones");
    return {};
  }
  return FetchAndFind(c.link_references, matrices, note);
}

absl::Status CancelledStatus(const std::string& run_id, const absl::Status& runner,
                             const std::string& journal) {
  return absl::CancelledError(absl::StrCat(
      "sweep ", run_id, " ", runner.message(),
      journal.empty() ? "" : absl::StrCat("; the journal ", journal, " resumes it")));
}

}  // namespace

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kProbe: return "probe";
    case Phase::kTests: return "tests";
    case Phase::kRetest: return "retest";
    case Phase::kAnalysis: return "analysis";
  }
  return "?";
}

absl::StatusOr<FleetPreflight> RunFleetPreflight(const SweepConfig& c) {
  inventory::Inventory inv = c.inventory;
  if (inv.nodes.empty()) return absl::InvalidArgumentError(absl::StrCat(inv.source, ": no nodes"));
  ASSIGN_OR_RETURN(Agents agents, ConnectAgents(c, inv));
  if (HasDiscovered(inv)) {
    ASSIGN_OR_RETURN(std::vector<size_t> kept, run::NameDiscoveredNodes(&inv, agents.api, c.parallel));
    std::vector<run::AgentApi*> named;
    for (size_t i : kept) named.push_back(agents.api[i]);
    agents.api = std::move(named);
  }
  run::ProbeOptions po;
  po.preflight = true;
  po.force = c.force;
  po.parallelism = c.parallel;
  po.all_nics = c.all_nics;
  po.expect = inv.expect;
  po.expectations = MergedAgentExpectations(inv.expect, c.expectations);
  FleetPreflight out;
  out.probe = run::ProbeNodes(inv, agents.api, po);
  std::vector<std::string> names;
  for (const auto& n : out.probe.nodes) names.push_back(n.name);
  for (const auto& info : out.probe.infos) out.answering += !info.hostname().empty();
  out.uniformity = analysis::FleetUniformity(names, out.probe.infos);
  return out;
}

schedule::EstimateParams Estimate(const SweepConfig& c) {
  schedule::EstimateParams e;
  const v1::SweepParams& p = c.params;
  e.sizes_bytes.assign(p.sizes_bytes().begin(), p.sizes_bytes().end());
  // Neither iterations nor a duration: the agent's default iterations.
  e.iterations = p.iterations() ? p.iterations() : (p.duration_ns() ? 0 : sweep_limits::kDefaultIterations);
  e.duration_ns = p.duration_ns();
  e.warmup_iterations = p.warmup_iterations();
  e.verify = p.verify();
  double rate = c.link_gbps;
  if (rate <= 0) {
    for (const auto& n : c.inventory.nodes) {
      if (n.link_gbps > 0 && (rate <= 0 || n.link_gbps < rate)) rate = n.link_gbps;
    }
  }
  e.link_gbps = rate > 0 ? rate : sweep_limits::kDefaultAssumedLinkGbps;
  // Incast: K senders share the target's port, each moves its data at 1/K of
  // it (the estimate and every test's deadline would be K times too short).
  // A measured rate is already what a cell got.
  e.link_gbps /= schedule::MaxFanIn(c.schedule);
  e.per_test_overhead_s = kDefaultSetupSeconds;
  if (c.measured && c.measured->gbps > 0) {
    e.per_test_overhead_s = c.measured->setup_s;
    e.link_gbps = c.measured->gbps;
  }
  return e;
}

absl::StatusOr<MeasuredCost> MeasureCost(const v1::Run& run) {
  MeasuredCost m;
  double setup = 0, wire_s = 0, bits = 0;
  for (const auto& p : run.pairs()) {
    if (p.status() != v1::RESULT_STATUS_OK || p.sizes().empty() || p.duration_ns() <= 0) continue;
    double test_wire = 0;
    for (const auto& s : p.sizes()) {
      test_wire += s.duration_ns() / 1e9;
      bits += 8.0 * static_cast<double>(s.size_bytes()) * static_cast<double>(s.iterations());
    }
    wire_s += test_wire;
    setup += std::max(0.0, p.duration_ns() / 1e9 - test_wire);
    ++m.tests;
  }
  if (m.tests == 0 || wire_s <= 0 || bits <= 0) {
    return absl::NotFoundError(absl::StrCat("run ", run.run_id(), " has no OK test with measured sizes"));
  }
  m.setup_s = setup / static_cast<double>(m.tests);
  m.gbps = bits / wire_s / 1e9;
  return m;
}

std::string DescribeQos(const SweepConfig& c, const FieldNames& names) {
  const v1::SweepParams& p = c.params;
  const inventory::Qos& q = c.inventory.qos;
  auto one = [&](absl::string_view what, bool given, uint32_t value, const std::optional<uint32_t>& inv,
                 absl::string_view name, absl::string_view key) -> std::string {
    if (given) {
      return absl::StrCat(what, " ", value, " (", name,
                          inv && *inv != value ? absl::StrCat(", over the inventory's qos.", key, " ", *inv) : "",
                          ")");
    }
    if (inv) return absl::StrCat(what, " ", *inv, " (the inventory's qos.", key, ")");
    return "";
  };
  std::vector<std::string> parts;
  for (std::string part : {one("service level", p.has_sl(), p.sl(), q.sl, names.sl, "sl"),
                           one("traffic class", p.has_tclass(), p.tclass(), q.tclass, names.tclass, "tclass")}) {
    if (!part.empty()) parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<run::Plan> PlanWithoutAgents(const SweepConfig& c) {
  ASSIGN_OR_RETURN(Resolved r, Resolve(c));
  return run::MakePlan(run::NodesFromInventory(r.inventory), r.memory, c.schedule, r.params);
}

namespace {

// The reference of the baseline run the policy names; null without one.
absl::StatusOr<std::unique_ptr<analysis::Baseline>> LoadBaseline(const SweepConfig& c) {
  if (!c.baseline) return std::unique_ptr<analysis::Baseline>();
  auto b = analysis::Baseline::FromRun(*c.baseline);
  if (!b.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("baseline ", c.policy.baseline_run(), ": ", b.status().message()));
  }
  return std::make_unique<analysis::Baseline>(std::move(*b));
}

// Preflight and discovery of every agent; CANCELLED when the sweep was
// cancelled meanwhile.
absl::StatusOr<run::ProbeResult> ProbeAgents(const SweepConfig& c, const inventory::Inventory& inv,
                                             const std::vector<run::AgentApi*>& api,
                                             const SweepHooks& hooks) {
  Report(hooks, Phase::kProbe);
  run::ProbeOptions po;
  po.preflight = c.preflight;
  po.force = c.force;
  po.all_nics = c.all_nics;
  po.parallelism = c.parallel;
  po.expect = inv.expect;
  po.expectations = MergedAgentExpectations(inv.expect, c.expectations);
  po.cancel = hooks.cancel;
  spdlog::info("probing {} agents", api.size());
  run::ProbeResult probe = run::ProbeNodes(inv, api, po);
  if (Cancelled(hooks)) {
    size_t answered = 0;
    for (const auto& info : probe.infos) answered += !info.hostname().empty();
    return absl::CancelledError(absl::StrCat("sweep cancelled while probing its agents (", answered, " of ",
                                             probe.infos.size(), " answered), before its first test"));
  }
  return probe;
}

// A test's deadline: the configured one, else the estimate's with margin.
std::chrono::milliseconds SweepTimeout(const SweepConfig& c) {
  if (c.sweep_timeout.count() > 0) return c.sweep_timeout;
  return std::chrono::milliseconds(
      static_cast<int64_t>((schedule::EstimateTestSeconds(Estimate(c)) * sweep_limits::kSweepTimeoutFactor +
                            sweep_limits::kSweepTimeoutSlackSeconds) *
                           1000));
}

// The runner's options: each result to the collector (the journal first),
// progress to the hooks under the `phase` and `pass` the sweep is in.
run::RunnerOptions RunnerOptionsFor(const SweepConfig& c, const SweepHooks& hooks, Collector& collect,
                                    const Phase& phase, const uint32_t& pass) {
  run::RunnerOptions ro;
  ro.parallelism = c.parallel;
  ro.retries = c.retries;
  ro.cancel = hooks.cancel;
  ro.on_result_concurrent = [&collect](const v1::PairResult& res, const schedule::Test& t) {
    return collect.Record(res, t);
  };
  ro.on_result = [&collect](const v1::PairResult& res, const schedule::Test& t) {
    return collect.OnResult(res, t);
  };
  if (hooks.on_progress) {
    ro.on_progress = [&hooks, &phase, &pass](const run::Progress& p) { Report(hooks, phase, pass, &p); };
  }
  return ro;
}

// Every node left out of the plan, with its reason.
std::vector<std::string> ExcludedNodes(const run::Plan& plan) {
  std::vector<std::string> excluded;
  for (const auto& n : plan.nodes) {
    if (n.excluded) excluded.push_back(absl::StrCat(n.name, ": ", n.excluded_reason));
  }
  return excluded;
}

// The run's record: identity, nodes, the pairs (moved out of the collector)
// and the analysis' matrices, blame and flags.
v1::Run AssembleRun(const SweepConfig& c, const Journal& journal, const run::Plan& plan,
                    const run::ProbeResult& probe, Collector& collect,
                    const std::vector<std::string>& excluded, const analysis::Outcome& outcome) {
  v1::Run result;
  result.set_run_id(journal.header.run_id());
  *result.mutable_started_at() = journal.header.started_at();
  *result.mutable_finished_at() = Now();
  result.set_mode(schedule::ModeName(plan.schedule_options.mode));
  *result.mutable_params() = plan.params;
  for (const auto& info : probe.infos) *result.add_nodes() = info;  // aligned with preflight
  for (const auto& rep : probe.preflight) *result.add_preflight() = rep;
  result.mutable_pairs()->Reserve(static_cast<int>(collect.pairs().size()));
  for (auto& p : collect.pairs()) *result.add_pairs() = std::move(p);
  collect.pairs().clear();
  for (const auto& e : excluded) result.add_excluded_nodes(e);
  *result.mutable_policy() = c.policy;
  analysis::FillRun(collect.matrices(), outcome, &result);
  analysis::FlagLinks(c.policy, &result);
  if (plan.schedule_options.mode == schedule::Mode::kIncast) analysis::FillIncast(&result);
  return result;
}

}  // namespace

absl::StatusOr<v1::Run> RunSweep(const SweepConfig& c, const SweepHooks& hooks) {
  ASSIGN_OR_RETURN(Resolved r, Resolve(c));
  ASSIGN_OR_RETURN(std::unique_ptr<analysis::Baseline> baseline, LoadBaseline(c));
  ASSIGN_OR_RETURN(Agents agents, ConnectAgents(c, r.inventory));
  RETURN_IF_ERROR(NameDiscovered(c, &r.inventory, &agents.api));

  // Preflight and discovery.
  ASSIGN_OR_RETURN(run::ProbeResult probe, ProbeAgents(c, r.inventory, agents.api, hooks));
  ASSIGN_OR_RETURN(run::Plan plan, run::MakePlan(probe.nodes, r.memory, c.schedule, r.params));
  // The run's verify seed, drawn unless given (after the fingerprint, which
  // a resume must match): recorded in the journal's header and Run.params; a
  // resume takes the header's.
  if (!c.resume && plan.params.seed() == 0) plan.params.set_seed(DrawSeed());
  Collector collect(plan, c, hooks);
  ASSIGN_OR_RETURN(Journal journal, OpenJournal(c, plan, collect));
  if (c.resume && journal.header.params().seed() != 0) plan.params.set_seed(journal.header.params().seed());
  collect.set_journal(journal.writer.get());
  const std::string& run_id = journal.header.run_id();
  if (plan.params.verify()) spdlog::info("run {}: verify seed {} (each test's is derived from it)", run_id, plan.params.seed());
  if (std::string qos = DescribeQos(c); !qos.empty()) spdlog::info("run {}: {}", run_id, qos);
  if (hooks.on_start) hooks.on_start(SweepStart{run_id, plan, journal.done.size()});

  // The tests.
  run::AgentPairTesterOptions to;
  to.test.sweep_timeout = SweepTimeout(c);
  run::AgentPairTester tester(agents.api, to);
  Phase phase = Phase::kTests;
  uint32_t pass = 0;
  run::RunnerOptions ro = RunnerOptionsFor(c, hooks, collect, phase, pass);
  // On any stop the journal is flushed (its destructor too, but a flush
  // error is reported here).
  auto stop = [&](const absl::Status& st) -> absl::Status {
    absl::Status flushed = journal.writer ? journal.writer->Flush() : absl::OkStatus();
    if (st.code() == absl::StatusCode::kCancelled) {
      return CancelledStatus(run_id, st, journal.writer ? journal.writer->path() : "");
    }
    return st.ok() ? flushed : st;
  };
  Report(hooks, phase);
  if (absl::Status st = run::SweepRunner(plan, tester, ro).Run(journal.done); !st.ok()) {
    return stop(st);
  }

  // Analysis; then outlier retests: the tests of low cells run again and the
  // new results replace the first ones, each pass numbering its rounds
  // after the last.
  const std::vector<std::string> excluded = ExcludedNodes(plan);
  Report(hooks, Phase::kAnalysis);
  analysis::Outcome outcome = analysis::Judge(collect.matrices(), c.policy, baseline.get(), excluded);
  uint32_t offset = static_cast<uint32_t>(plan.schedule.rounds());
  // Regressed cells are retested once, in the first pass.
  RegressedCells regressed = FindRegressedCells(c, hooks, plan, collect.matrices());
  for (pass = 1; pass <= c.retest_low && (outcome.low > 0 || !regressed.regressed.empty()); ++pass) {
    run::Plan retest = plan;
    std::vector<CellRef> extra = regressed.regressed;
    extra.insert(extra.end(), regressed.partners.begin(), regressed.partners.end());
    ASSIGN_OR_RETURN(retest.schedule, RetestSchedule(collect.matrices(), plan, extra));
    if (retest.schedule.tests() == 0) break;
    MarkRetested(collect.matrices(), regressed.regressed);
    spdlog::info("outlier retest {}: {} test(s) ({} low, {} regressed cell(s)) in {} round(s)", pass,
                 retest.schedule.tests(), outcome.low, regressed.regressed.size(), retest.schedule.rounds());
    regressed = {};
    phase = Phase::kRetest;
    Report(hooks, phase, pass);
    ro.round_offset = offset;
    offset += static_cast<uint32_t>(retest.schedule.rounds());
    if (absl::Status st = run::SweepRunner(retest, tester, ro).Run(journal.done); !st.ok()) {
      return stop(st);
    }
    Report(hooks, Phase::kAnalysis);
    outcome = analysis::Judge(collect.matrices(), c.policy, baseline.get(), excluded);
  }
  RETURN_IF_ERROR(stop(absl::OkStatus()));
  // --memory lists: the later kinds' halves and the gdr blames (gdr.h).
  analysis::JudgeMemoryHalves(collect.pairs(), c.policy, excluded, &outcome);

  return AssembleRun(c, journal, plan, probe, collect, excluded, outcome);
}

}  // namespace gdrbench::controller::sweep
