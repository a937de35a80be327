// AgentPairTester: the PairTester of a sweep over agents (pair_tester.h):
// each test through RunPairTest, set up ahead through OpenPairTarget and
// ConnectPairAhead, and each agent's health across its tests.
#include "controller/run/pair_tester.h"

#include <algorithm>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/run/memory_kinds.h"
#include "controller/run/pair_verdict.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {

AgentPairTester::AgentPairTester(std::vector<AgentApi*> agents, AgentPairTesterOptions options)
    : agents_(std::move(agents)), options_(options), health_(std::make_unique<Health[]>(agents_.size())) {}

void AgentPairTester::NoteAnswer(uint32_t node, const absl::Status& st) {
  Health& h = health_[node];
  if (st.code() != absl::StatusCode::kUnavailable) {
    if (h.unavailable.load(std::memory_order_relaxed) != 0) h.unavailable.store(0);
    return;
  }
  if (options_.down_after_unavailable == 0) return;
  if (h.unavailable.fetch_add(1) + 1 >= options_.down_after_unavailable && !h.down.load()) {
    std::lock_guard<std::mutex> lock(h.mu);
    if (!h.down.load()) {
      h.reason = std::string(st.message());
      h.down.store(true);
      spdlog::warn("agent of node {} taken as down: {}", node, h.reason);
    }
  }
}

bool AgentPairTester::IsDown(uint32_t node, std::string* why) {
  Health& h = health_[node];
  if (!h.down.load()) return false;
  std::lock_guard<std::mutex> lock(h.mu);
  *why =
      absl::StrCat("agent down (", options_.down_after_unavailable, " consecutive UNAVAILABLE): ", h.reason);
  return true;
}

namespace {

// Why `kind` cannot run on this pair: a GPU kind on a rail without a GPU ("": it can).
std::string KindUnavailable(const Plan& plan, const schedule::Test& t, absl::string_view kind) {
  if (!absl::StartsWith(kind, "gpu")) return "";
  const uint32_t dst_rail = t.TargetRail();
  for (const auto& [n, rail] :
       {std::pair{&plan.nodes[t.src], t.rail}, std::pair{&plan.nodes[t.dst], dst_rail}}) {
    if (rail >= n->rails.size() || !n->rails[rail].gpu) {
      return absl::StrCat(kind, " memory: rail ", rail, " of node ", n->name,
                          " has no GPU (give rails as {nic, gpu} in the inventory)");
    }
  }
  return "";
}

// AgentPairTester's set-up ahead: the target opened, and the memory string
// its side names.
struct AgentPrepared final : PreparedTest {
  PreparedTarget target;
  std::string memory;
  bool counted = false;  // in AgentPairTester::held_ahead_
};

}  // namespace

PairTestOptions AgentPairTester::TestOptions(const PairTestSpec& spec) const {
  const Plan& plan = *spec.plan;
  PairTestOptions o = options_.test;
  o.params_id = plan.id;  // every kind's test runs the plan's params
  if (plan.params.verify()) o.verify_seed = TestSeed(plan.params.seed(), spec.test, spec.round, spec.attempt);
  return o;
}

std::unique_ptr<PreparedTest> AgentPairTester::Prepare(const PairTestSpec& spec) {
  const Plan& plan = *spec.plan;
  const auto& t = spec.test;
  // A list of kinds opens a target per kind, one after another: not ahead.
  if (plan.memory.find(',') != std::string::npos) return nullptr;
  const PlanNode& src = plan.nodes[t.src];
  const PlanNode& dst = plan.nodes[t.dst];
  const uint32_t dst_rail = t.TargetRail();
  std::string why;
  if (src.excluded || dst.excluded || IsDown(t.dst, &why) || IsDown(t.src, &why) ||
      t.rail >= src.rails.size() || dst_rail >= dst.rails.size() ||
      !KindUnavailable(plan, t, plan.memory).empty()) {
    return nullptr;  // Run says why, without an RPC
  }
  auto prepared = std::make_unique<AgentPrepared>();
  prepared->memory = EndpointMemory(dst, dst_rail, plan.memory);
  PairSide target{agents_[t.dst], dst.name, dst.rails[dst_rail].nic, {}, prepared->memory};
  if (!options_.connect_ahead || held_ahead_.fetch_add(1) >= options_.max_held_ahead) {
    if (options_.connect_ahead) held_ahead_.fetch_sub(1);
    OpenPairTarget(target, plan.params, t.bidirectional, TestOptions(spec), &prepared->target,
                   [&](bool, const absl::Status& st) { NoteAnswer(t.dst, st); });
    return prepared;
  }
  const std::string src_memory = EndpointMemory(src, t.rail, plan.memory);
  PairSide initiator{agents_[t.src], src.name, src.rails[t.rail].nic, {}, src_memory};
  // The answers are bounded by the test's expected rate (AnswerBounds).
  ConnectPairAhead(initiator, target, plan.params, t.bidirectional, TestOptions(spec),
                   TestExpectedGbps(plan, t), &prepared->target,
                   [this, src = t.src, dst = t.dst](bool is_target, const absl::Status& st) {
                     NoteAnswer(is_target ? dst : src, st);
                   });
  // Counted while an initiator is held: given back when the test ran or was discarded.
  prepared->counted = prepared->target.held != nullptr;
  if (!prepared->counted) held_ahead_.fetch_sub(1);
  return prepared;
}

void AgentPairTester::Discard(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared) {
  auto* p = dynamic_cast<AgentPrepared*>(prepared.get());
  if (p != nullptr && p->counted) held_ahead_.fetch_sub(1);
  if (p == nullptr || !p->target.status.ok()) return;
  const auto& t = spec.test;
  const PlanNode& dst = spec.plan->nodes[t.dst];
  PairSide target{agents_[t.dst], dst.name, dst.rails[t.TargetRail()].nic, {}, p->memory};
  ClosePreparedTarget(target, p->target, [&](bool, const absl::Status& st) { NoteAnswer(t.dst, st); });
}

void AgentPairTester::Run(const PairTestSpec& spec, v1::PairResult* r) { RunWith(spec, nullptr, r); }

void AgentPairTester::RunPrepared(const PairTestSpec& spec, std::unique_ptr<PreparedTest> prepared,
                                  v1::PairResult* r) {
  auto* p = dynamic_cast<AgentPrepared*>(prepared.get());
  RunWith(spec, p != nullptr ? &p->target : nullptr, r);
  if (p != nullptr && p->counted) held_ahead_.fetch_sub(1);
}

void AgentPairTester::RunWith(const PairTestSpec& spec, PreparedTarget* prepared, v1::PairResult* r) {
  const Plan& plan = *spec.plan;
  const auto& t = spec.test;
  const PlanNode& src = plan.nodes[t.src];
  const PlanNode& dst = plan.nodes[t.dst];
  const uint32_t dst_rail = t.TargetRail();
  PairSide initiator{agents_[t.src], src.name, src.rails[t.rail].nic, {}, r->src().memory()};
  PairSide target{agents_[t.dst], dst.name, dst.rails[dst_rail].nic, {}, r->dst().memory()};
  auto on_answer = [&](bool is_target, const absl::Status& st) { NoteAnswer(is_target ? t.dst : t.src, st); };
  std::string why;
  if (IsDown(t.dst, &why) || IsDown(t.src, &why)) {
    // An agent taken as down since its target was opened ahead: released all the same.
    if (prepared != nullptr) ClosePreparedTarget(target, *prepared, on_answer);
    const bool target_down = health_[t.dst].down.load();
    Fail(r, v1::RESULT_STATUS_ERROR,
         absl::StrCat(target_down ? "target " : "initiator ", target_down ? dst.name : src.name, ": ", why));
    SetStarted(r);
    r->set_duration_ns(0);
    return;
  }
  const PairTestOptions o = TestOptions(spec);
  // An agent full when the target was opened ahead (its target count or
  // memory limit, held by this round's targets then) may have room now:
  // the test opens its own, as without set-up ahead.
  if (prepared != nullptr && absl::IsResourceExhausted(prepared->status)) prepared = nullptr;
  if (plan.memory.find(',') == std::string::npos) {
    // One kind (the usual sweep): FillIdentity gave each end its memory, so
    // nothing is split, copied or allocated (this runs once per test,
    // millions of times in a large sweep). As RunPairTestPerKind for a list
    // of one.
    if (std::string no_kind = KindUnavailable(plan, t, plan.memory); !no_kind.empty()) {
      if (prepared != nullptr) ClosePreparedTarget(target, *prepared, on_answer);
      Fail(r, v1::RESULT_STATUS_ERROR, std::move(no_kind));
      return;
    }
    (void)RunPairTest(initiator, target, plan.params, t.bidirectional, o, r, on_answer, prepared);
    return;
  }
  // --memory host,gpu: every kind once, back to back (memory_kinds.h). Each
  // end's memory is its own rail's (cross-rail: the target's is dst_rail's).
  // Prepare opens nothing ahead for these.
  if (prepared != nullptr) ClosePreparedTarget(target, *prepared, on_answer);
  absl::InlinedVector<KindSides, 2> kinds;
  auto listed = SplitMemoryKinds(plan.memory);
  // MakePlan's callers checked the list; were it bad, the agents refuse it.
  for (const std::string& kind : listed.ok() ? *listed : std::vector<std::string>{plan.memory}) {
    kinds.push_back(KindSides{EndpointMemory(src, t.rail, kind), EndpointMemory(dst, dst_rail, kind),
                              KindUnavailable(plan, t, kind)});
  }
  (void)RunPairTestPerKind(initiator, target, kinds, plan.params, t.bidirectional, o, r, on_answer);
}

}  // namespace gdrbench::controller::run
