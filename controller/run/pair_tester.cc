#include "controller/run/pair_tester.h"

#include "controller/run/answer_bounds.h"
#include "controller/run/clear_keeping.h"
#include "controller/run/memory_kinds.h"
#include "controller/run/pair_stream.h"
#include "controller/run/pair_verdict.h"

#include <algorithm>
#include <memory>
#include <random>

#include "absl/container/inlined_vector.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// This test's verify seed (PairTestOptions::verify_seed).
uint64_t VerifySeed(const v1::SweepParams& p, const PairTestOptions& o) {
  if (o.verify_seed != 0) return o.verify_seed;
  if (p.seed() != 0) return p.seed();
  std::random_device rd;
  const uint64_t drawn = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return drawn != 0 ? drawn : 1;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This thread's requests, reused test after test (a sweep runs millions):
// every field is set for each test, none is cleared first, so strings keep
// their storage; the params are copied only when they are not the ones of
// this thread's last test (PairTestOptions::params_id).
struct Requests {
  v1::OpenTargetRequest open;
  v1::RunWriteSweepRequest sweep;
  uint64_t open_params_id = 0, sweep_params_id = 0;
};
thread_local Requests requests;

// Copies `p` into `params` unless they already are `params_id`'s.
void SetParams(const v1::SweepParams& p, uint64_t params_id, uint64_t* held_id, v1::SweepParams* params) {
  if (params_id != 0 && *held_id == params_id) return;
  *params = p;
  *held_id = params_id;
}

using Open = v1::OpenTargetRequest;
using Sweep = v1::RunWriteSweepRequest;
using Params = v1::SweepParams;

void FillOpen(const PairSide& target, const v1::SweepParams& p, bool bidirectional, const PairTestOptions& o,
              std::chrono::milliseconds lease, v1::OpenTargetRequest* open) {
  AssignField<&Open::device, &Open::mutable_device>(open, target.device);
  open->set_port_num(0);
  AssignField<&Open::bind_address, &Open::mutable_bind_address>(open, target.bind_address);
  uint64_t max_size = 0;
  for (uint64_t s : p.sizes_bytes()) max_size = std::max(max_size, s);
  open->set_buffer_bytes(max_size);
  // Sizes, QPs, verify, memory and direction travel in params only.
  SetParams(p, o.params_id, &requests.open_params_id, open->mutable_params());
  AssignField<&Params::memory, &Params::mutable_memory>(open->mutable_params(), target.memory);
  open->mutable_params()->set_bidirectional(bidirectional);
  open->set_lease_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(lease).count());
}

// A target opened at once holds its test only.
std::chrono::milliseconds Lease(const PairTestOptions& o) {
  return o.lease.count() > 0 ? o.lease : o.sweep_timeout + std::chrono::seconds(60);
}

// The pattern seed of a test's target and initiator.
uint64_t OpenSeed(const v1::SweepParams& p, const PairTestOptions& o) {
  return p.verify() ? VerifySeed(p, o) : p.seed();
}

// OpenTarget through this thread's request, held for `lease`; `hold`: the
// initiator may not send until started (HeldSweep).
absl::Status OpenTargetCall(const PairSide& target, const v1::SweepParams& p, bool bidirectional,
                            const PairTestOptions& o, std::chrono::milliseconds lease, uint64_t seed,
                            v1::OpenTargetResponse* opened, bool hold = false) {
  v1::OpenTargetRequest& open = requests.open;
  FillOpen(target, p, bidirectional, o, lease, &open);
  open.set_hold_start(hold);
  // Each test verifies a pattern of its own (set after the params, which
  // are kept between tests of one plan).
  open.mutable_params()->set_seed(seed);
  return target.agent->OpenTarget(open, opened);
}

// The initiator's request for the target `opened` answered.
void FillSweep(const PairSide& initiator, const v1::SweepParams& p, bool bidirectional, const PairTestOptions& o,
               const v1::OpenTargetResponse& opened, v1::RunWriteSweepRequest* sweep) {
  AssignField<&Sweep::device, &Sweep::mutable_device>(sweep, initiator.device);
  AssignField<&Sweep::bind_address, &Sweep::mutable_bind_address>(sweep, initiator.bind_address);
  AssignField<&Sweep::target_address, &Sweep::mutable_target_address>(sweep, opened.address());
  sweep->set_target_cm_port(opened.cm_port());
  AssignField<&Sweep::target_id, &Sweep::mutable_target_id>(sweep, opened.target_id());
  *sweep->mutable_remote_buffers() = opened.buffers();
  SetParams(p, o.params_id, &requests.sweep_params_id, sweep->mutable_params());
  AssignField<&Params::memory, &Params::mutable_memory>(sweep->mutable_params(), initiator.memory);
  sweep->mutable_params()->set_bidirectional(bidirectional);
  // The mode as the target resolved it (auto: rdma_cm when its port has an
  // IPv4 address); out of band the target's QPs and port go along.
  sweep->mutable_params()->set_cm(opened.cm());
  if (opened.cm() == v1::CONNECTION_MODE_OOB) {
    *sweep->mutable_target_oob() = opened.oob();
  } else {
    sweep->clear_target_oob();
  }
  sweep->set_wait_for_start(false);
}

}  // namespace

void SetStarted(v1::PairResult* r) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  Spares& spares = ThreadSpares();
  if (!r->has_started_at() && spares.started_at != nullptr)
    r->set_allocated_started_at(spares.started_at.release());
  google::protobuf::Timestamp* t = r->mutable_started_at();
  t->set_seconds(ns / 1000000000);
  t->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

absl::Status RunPairTest(const PairSide& initiator, const PairSide& target,
                         const v1::SweepParams& p, bool bidirectional, const PairTestOptions& o,
                         v1::PairResult* r) {
  return RunPairTest(initiator, target, p, bidirectional, o, r,
                     [](bool, const absl::Status&) {});
}

namespace {

// VerifyTarget checks the pattern (verify) and returns the target's own
// direction of a bidirectional test (reverse_sizes); its failure, if any.
absl::Status VerifyStep(const PairSide& target, const v1::SweepParams& p, uint64_t seed,
                        const v1::OpenTargetResponse& opened,
                        absl::FunctionRef<void(bool, const absl::Status&)> answer, v1::PairResult* r) {
  v1::VerifyTargetRequest vr;
  vr.set_target_id(opened.target_id());
  vr.set_seed(seed);
  *vr.mutable_sizes_bytes() = p.sizes_bytes();
  auto verified = target.agent->VerifyTarget(vr);
  answer(true, verified.status());
  if (!verified.ok()) return verified.status();
  ApplyVerify(*verified, p.verify(), r);
  return absl::OkStatus();
}

// Releases the target and keeps its port counters; a failed close only logs
// (the agent's lease frees it).
void CloseTargetStep(const PairSide& target, const v1::OpenTargetResponse& opened,
                     absl::FunctionRef<void(bool, const absl::Status&)> on_answer, v1::PairResult* r) {
  auto closed = target.agent->CloseTarget(opened.target_id());
  on_answer(true, closed.status());
  if (!closed.ok()) {
    spdlog::warn("CloseTarget {} on {}: {} (its lease will free it)", opened.target_id(),
                 std::string(target.name), std::string(closed.status().message()));
  } else if (closed->counters().changes_size() > 256) {
    // As AnswerBounds for the initiator's: not one port's counters.
    spdlog::warn("CloseTarget {} on {}: {} counter changes for one port: dropped", opened.target_id(),
                 std::string(target.name), closed->counters().changes_size());
  } else if (closed->has_counters()) {
    r->mutable_dst_counters()->Swap(closed->mutable_counters());
  }
}

}  // namespace

absl::Status RunPairTest(const PairSide& initiator, const PairSide& target, const v1::SweepParams& p,
                         bool bidirectional, const PairTestOptions& o, v1::PairResult* r,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer) {
  return RunPairTest(initiator, target, p, bidirectional, o, r, on_answer, nullptr);
}

std::chrono::milliseconds PreparedLease(const PairTestOptions& o) {
  return o.lease.count() > 0 ? o.lease : 2 * o.sweep_timeout + std::chrono::seconds(60);
}

PreparedTarget::PreparedTarget() = default;
PreparedTarget::~PreparedTarget() = default;

void OpenPairTarget(const PairSide& target, const v1::SweepParams& p, bool bidirectional,
                    const PairTestOptions& o, PreparedTarget* prepared,
                    absl::FunctionRef<void(bool target, const absl::Status&)> on_answer) {
  prepared->seed = OpenSeed(p, o);
  prepared->status =
      OpenTargetCall(target, p, bidirectional, o, PreparedLease(o), prepared->seed, &prepared->opened);
  on_answer(true, prepared->status);
}

void ConnectPairAhead(const PairSide& initiator, const PairSide& target, const v1::SweepParams& p,
                      bool bidirectional, const PairTestOptions& o, double expected_gbps,
                      PreparedTarget* prepared,
                      std::function<void(bool target, const absl::Status&)> on_answer) {
  prepared->seed = OpenSeed(p, o);
  prepared->status = OpenTargetCall(target, p, bidirectional, o, PreparedLease(o), prepared->seed,
                                    &prepared->opened, /*hold=*/true);
  on_answer(true, prepared->status);
  // An agent that does not hold (an older one) lets its initiator send once
  // connected: its initiator connects when the test runs, as before.
  if (!prepared->status.ok() || !prepared->opened.start_held()) return;
  v1::RunWriteSweepRequest sweep;
  PairTestOptions fresh = o;
  fresh.params_id = 0;  // a new request: the params copied, whatever this thread's last ones were
  FillSweep(initiator, p, bidirectional, fresh, prepared->opened, &sweep);
  sweep.mutable_params()->set_seed(prepared->seed);
  sweep.set_wait_for_start(true);
  prepared->held =
      std::make_unique<HeldSweep>(initiator, target, std::move(sweep), PreparedLease(o), prepared->opened,
                                  AnswerBounds(p, expected_gbps), std::move(on_answer));
}

void ClosePreparedTarget(const PairSide& target, PreparedTarget& prepared,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer) {
  if (prepared.held != nullptr) prepared.held->Abandon();  // its initiator first: no data moves
  if (!prepared.status.ok()) return;
  v1::PairResult unused;
  CloseTargetStep(target, prepared.opened, on_answer, &unused);
}

absl::Status RunPairTest(const PairSide& initiator, const PairSide& target, const v1::SweepParams& p,
                         bool bidirectional, const PairTestOptions& o, v1::PairResult* r,
                         absl::FunctionRef<void(bool target, const absl::Status&)> on_answer,
                         PreparedTarget* prepared) {
  const int64_t t0 = NowNs();
  SetStarted(r);
  // A retry's counters are its own: none are kept from an attempt before.
  r->clear_src_counters();
  r->clear_dst_counters();
  r->clear_link_flag();
  auto finish = [&] { r->set_duration_ns(NowNs() - t0); };
  absl::Status first_error;
  auto answer = [&](bool is_target, const absl::Status& st) {
    on_answer(is_target, st);
    if (!st.ok() && first_error.ok()) first_error = st;
  };

  // The answer is this thread's when opened here (agent_api.h: OpenTarget
  // fills it), the preparer's when opened ahead (its answer was seen then).
  thread_local v1::OpenTargetResponse opened_here;
  const v1::OpenTargetResponse* opened_at = &opened_here;
  uint64_t seed = 0;
  absl::Status open_st;
  if (prepared != nullptr) {
    seed = prepared->seed;
    open_st = prepared->status;
    opened_at = &prepared->opened;
    if (!open_st.ok()) first_error = open_st;
  } else {
    seed = OpenSeed(p, o);
    open_st = OpenTargetCall(target, p, bidirectional, o, Lease(o), seed, &opened_here);
    answer(true, open_st);
  }
  if (p.verify()) r->set_verify_seed(seed);
  if (!open_st.ok()) {
    Fail(r, v1::RESULT_STATUS_ERROR, AgentError("OpenTarget", target.name, open_st.message()));
    finish();
    return first_error;
  }
  const v1::OpenTargetResponse& opened = *opened_at;
  Assign(r->mutable_dst()->mutable_memory_kind(), opened.memory_kind());
  Assign(r->mutable_dst()->mutable_registration(), opened.registration());
  Stream inline_stream{AnswerBounds(p, r->expected_gbps()), absl::OkStatus()};
  Stream* stream_at = &inline_stream;
  absl::Status st;
  if (prepared != nullptr && prepared->held != nullptr) {
    // Connected ahead: the data phase begins here.
    if (absl::Status started = prepared->held->Start(); !started.ok()) {
      if (first_error.ok()) first_error = started;
      prepared->held->Abandon();
      CloseTargetStep(target, opened, on_answer, r);
      Fail(r, v1::RESULT_STATUS_ERROR, AgentError("ConnectTarget (start)", target.name, started.message()));
      finish();
      return first_error;
    }
    absl::Status stream_error;
    st = prepared->held->Finish(r, &stream_at, &stream_error);
    if (!stream_error.ok() && first_error.ok()) first_error = stream_error;
  } else {
    v1::RunWriteSweepRequest& sweep = requests.sweep;
    FillSweep(initiator, p, bidirectional, o, opened, &sweep);
    sweep.mutable_params()->set_seed(seed);
    st = StreamSweep(initiator, target, sweep, o.sweep_timeout, opened, answer, inline_stream, r);
  }
  const Stream& stream = *stream_at;

  const bool swept = st.ok() && stream.got_summary && r->summary().status() == v1::RESULT_STATUS_OK;
  absl::Status verify_st;
  if (swept && (p.verify() || bidirectional)) verify_st = VerifyStep(target, p, seed, opened, answer, r);
  // Always release the target, even after a failure.
  CloseTargetStep(target, opened, on_answer, r);
  SetVerdict(initiator.name, target.name,
             PairSteps{stream.bounds.first_error(), stream.connect_st, st, stream.got_summary, verify_st}, r);
  finish();
  return first_error;
}

uint64_t DeriveSeed(uint64_t base, uint64_t salt) {
  const uint64_t s = Mix(base ^ Mix(salt));
  return s != 0 ? s : 1;
}

uint64_t TestSeed(uint64_t run_seed, const schedule::Test& t, uint32_t round, uint32_t attempt) {
  uint64_t s = DeriveSeed(run_seed, t.src);
  s = DeriveSeed(s, t.dst);
  s = DeriveSeed(s, (uint64_t{t.rail} << 32) | t.TargetRail());
  return DeriveSeed(s, (uint64_t{round} << 32) | attempt);
}

void FillIdentity(const PairTestSpec& spec, v1::PairResult* r) {
  const Plan& plan = *spec.plan;
  const auto& t = spec.test;
  // Each identity field set only when it differs: a result reused by the
  // runner (ReadyForNextTest) keeps the last test's, mostly the same pair
  // on another rail.
  using E = v1::Endpoint;
  auto fill = [&](uint32_t idx, uint32_t rail, v1::Endpoint* e) {
    const PlanNode& n = plan.nodes[idx];
    AssignField<&E::node, &E::mutable_node>(e, n.name);
    AssignField<&E::agent_address, &E::mutable_agent_address>(e, n.address);
    AssignField<&E::nic_device, &E::mutable_nic_device>(
        e, rail < n.rails.size() ? absl::string_view(n.rails[rail].nic) : absl::string_view());
    AssignField<&E::memory, &E::mutable_memory>(e, EndpointMemory(n, rail, plan.memory));
  };
  const uint32_t dst_rail = t.TargetRail();
  fill(t.src, t.rail, r->mutable_src());
  fill(t.dst, dst_rail, r->mutable_dst());
  r->set_rail(t.rail);
  if (t.CrossRail()) {
    r->set_dst_rail(dst_rail);
  } else {
    r->clear_dst_rail();  // absent = the same rail as the initiator
  }
  r->set_round(spec.round);
  r->set_expected_gbps(TestExpectedGbps(plan, t));
}

double TestExpectedGbps(const Plan& plan, const schedule::Test& t) {
  const uint32_t dst_rail = t.TargetRail();
  double a = t.rail < plan.nodes[t.src].rail_gbps.size() ? plan.nodes[t.src].rail_gbps[t.rail] : 0;
  double b = dst_rail < plan.nodes[t.dst].rail_gbps.size() ? plan.nodes[t.dst].rail_gbps[dst_rail] : 0;
  // Incast: the target's port is shared by its K senders, so a sender is held
  // to its fair share (the per-target sum is judged against the whole port:
  // analysis/incast.h).
  b /= schedule::MaxFanIn(plan.schedule_options);
  return ExpectedGbps(a, b);
}

void RecycleResult(v1::PairResult* r) {
  Spares& spares = ThreadSpares();
  // Not cleared: a spare summary is only ever swapped with the answer's
  // (SwapInSummary), and a spare start time gets both its fields (SetStarted).
  if (r->has_summary() && spares.summary == nullptr) spares.summary.reset(r->release_summary());
  if (r->has_started_at() && spares.started_at == nullptr) spares.started_at.reset(r->release_started_at());
}

void ReadyForNextTest(v1::PairResult* r) {
  RecycleResult(r);
  v1::Endpoint* src = r->release_src();
  v1::Endpoint* dst = r->release_dst();
  r->Clear();
  for (v1::Endpoint* e : {src, dst}) {
    if (e == nullptr) continue;
    e->clear_memory_kind();
    e->clear_registration();
  }
  r->set_allocated_src(src);
  r->set_allocated_dst(dst);
}

void ApplyReverseChecks(v1::PairResult* r) {
  for (const auto& c : r->summary().reverse_checks()) {
    for (auto& s : *r->mutable_reverse_sizes()) {
      if (s.size_bytes() != c.size_bytes()) continue;
      s.set_verified(c.verified());
      s.set_verify_first_bad_offset(c.verify_first_bad_offset());
      if (!c.verified()) {
        s.set_status(v1::RESULT_STATUS_FAILED);
        s.set_error(c.error());
      }
    }
  }
}

}  // namespace gdrbench::controller::run
