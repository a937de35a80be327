#include "controller/run/pair_tester.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SetStarted(v1::PairResult* r) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  r->mutable_started_at()->set_seconds(ns / 1000000000);
  r->mutable_started_at()->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

void Fail(v1::PairResult* r, v1::ResultStatus status, std::string reason) {
  r->set_status(status);
  r->set_reason(std::move(reason));
}

}  // namespace

void FillIdentity(const PairTestSpec& spec, v1::PairResult* r) {
  const Plan& plan = *spec.plan;
  const auto& t = spec.test;
  auto fill = [&](uint32_t idx, v1::Endpoint* e) {
    const PlanNode& n = plan.nodes[idx];
    e->set_node(n.name);
    e->set_agent_address(n.address);
    if (t.rail < n.rails.size()) e->set_nic_device(n.rails[t.rail].nic);
    e->set_memory(EndpointMemory(n, t.rail, plan.memory));
  };
  fill(t.src, r->mutable_src());
  fill(t.dst, r->mutable_dst());
  r->set_rail(t.rail);
  r->set_round(spec.round);
  double a = t.rail < plan.nodes[t.src].rail_gbps.size() ? plan.nodes[t.src].rail_gbps[t.rail] : 0;
  double b = t.rail < plan.nodes[t.dst].rail_gbps.size() ? plan.nodes[t.dst].rail_gbps[t.rail] : 0;
  r->set_expected_gbps(a > 0 && b > 0 ? std::min(a, b) : std::max(a, b));
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

AgentPairTester::AgentPairTester(std::vector<AgentApi*> agents, AgentPairTesterOptions options)
    : agents_(std::move(agents)),
      options_(options),
      health_(std::make_unique<Health[]>(agents_.size())) {}

void AgentPairTester::NoteAnswer(uint32_t node, const absl::Status& st) {
  Health& h = health_[node];
  if (st.code() != absl::StatusCode::kUnavailable) {
    h.unavailable.store(0);
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
  *why = absl::StrCat("agent down (", options_.down_after_unavailable,
                      " consecutive UNAVAILABLE): ", h.reason);
  return true;
}

void AgentPairTester::Run(const PairTestSpec& spec, v1::PairResult* r) {
  const Plan& plan = *spec.plan;
  const auto& t = spec.test;
  const PlanNode& src = plan.nodes[t.src];
  const PlanNode& dst = plan.nodes[t.dst];
  const int64_t t0 = NowNs();
  SetStarted(r);
  auto finish = [&] { r->set_duration_ns(NowNs() - t0); };
  std::string why;
  if (IsDown(t.dst, &why)) {
    Fail(r, v1::RESULT_STATUS_ERROR, absl::StrCat("target ", dst.name, ": ", why));
    return finish();
  }
  if (IsDown(t.src, &why)) {
    Fail(r, v1::RESULT_STATUS_ERROR, absl::StrCat("initiator ", src.name, ": ", why));
    return finish();
  }
  const v1::SweepParams& p = plan.params;

  // Requests reused per worker thread (Clear keeps their storage).
  thread_local v1::OpenTargetRequest open;
  thread_local v1::RunWriteSweepRequest sweep;
  open.Clear();
  sweep.Clear();
  open.set_device(dst.rails[t.rail].nic);
  open.set_memory(r->dst().memory());
  uint64_t max_size = 0;
  for (uint64_t s : p.sizes_bytes()) max_size = std::max(max_size, s);
  open.set_buffer_bytes(max_size);
  open.set_qps(p.qps());
  open.set_bidirectional(t.bidirectional);
  open.set_verify(p.verify());
  *open.mutable_sizes_bytes() = p.sizes_bytes();
  *open.mutable_params() = p;
  open.mutable_params()->set_memory(r->dst().memory());
  open.mutable_params()->set_bidirectional(t.bidirectional);
  // The lease outlives the sweep's deadline, so only a vanished controller
  // leaves the agent to reclaim the target.
  open.set_lease_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(options_.sweep_timeout).count() +
                    60'000'000'000LL);
  auto target = agents_[t.dst]->OpenTarget(open);
  NoteAnswer(t.dst, target.status());
  if (!target.ok()) {
    Fail(r, v1::RESULT_STATUS_ERROR,
         absl::StrCat("OpenTarget on ", dst.name, ": ", target.status().message()));
    return finish();
  }

  sweep.set_device(src.rails[t.rail].nic);
  sweep.set_target_address(target->address());
  sweep.set_target_cm_port(target->cm_port());
  sweep.set_target_id(target->target_id());
  *sweep.mutable_remote_buffers() = target->buffers();
  *sweep.mutable_params() = p;
  sweep.mutable_params()->set_memory(r->src().memory());
  sweep.mutable_params()->set_bidirectional(t.bidirectional);
  bool got_summary = false;
  absl::Status st = agents_[t.src]->RunWriteSweep(
      sweep, options_.sweep_timeout, [&](const v1::RunWriteSweepResponse& m) {
        if (m.has_size()) *r->add_sizes() = m.size();
        if (m.has_summary()) {
          *r->mutable_summary() = m.summary();
          got_summary = true;
        }
      });
  NoteAnswer(t.src, st);

  // VerifyTarget checks the pattern (verify) and returns the target's own
  // direction of a bidirectional test (reverse_sizes).
  if (st.ok() && got_summary && (p.verify() || t.bidirectional) &&
      r->summary().status() == v1::RESULT_STATUS_OK) {
    v1::VerifyTargetRequest vr;
    vr.set_target_id(target->target_id());
    vr.set_seed(p.seed());
    *vr.mutable_sizes_bytes() = p.sizes_bytes();
    auto verified = agents_[t.dst]->VerifyTarget(vr);
    NoteAnswer(t.dst, verified.status());
    if (!verified.ok()) {
      st = absl::Status(verified.status().code(),
                        absl::StrCat("VerifyTarget on ", dst.name, ": ", verified.status().message()));
    } else {
      std::vector<std::string> bad;
      for (const auto& v : verified->sizes()) {
        for (auto& s : *r->mutable_sizes()) {
          if (s.size_bytes() != v.size_bytes()) continue;
          s.set_verified(v.verified());
          s.set_verify_first_bad_offset(v.verify_first_bad_offset());
          if (p.verify() && !v.verified()) {
            s.set_status(v1::RESULT_STATUS_FAILED);
            s.set_error(v.error());
            bad.push_back(absl::StrCat(v.size_bytes(), " B at offset ", v.verify_first_bad_offset(),
                                       v.error().empty() ? "" : absl::StrCat(" (", v.error(), ")")));
          }
        }
      }
      *r->mutable_reverse_sizes() = verified->reverse_sizes();
      ApplyReverseChecks(r);
      if (!bad.empty()) {
        Fail(r, v1::RESULT_STATUS_FAILED,
             absl::StrCat("data mismatch on ", dst.name, ": ", absl::StrJoin(bad, ", ")));
      }
    }
  }

  // Always release the target, even after a failure; a failed close only logs
  // (the agent's lease frees it) but is noted in the reason.
  absl::Status closed = agents_[t.dst]->CloseTarget(target->target_id());
  if (!closed.ok()) spdlog::warn("CloseTarget on {}: {}", dst.name, std::string(closed.message()));

  if (r->status() == v1::RESULT_STATUS_FAILED) return finish();  // verify mismatch
  if (!st.ok()) {
    Fail(r, st.code() == absl::StatusCode::kDeadlineExceeded ? v1::RESULT_STATUS_FAILED
                                                              : v1::RESULT_STATUS_ERROR,
         absl::StrCat("RunWriteSweep on ", src.name, ": ", st.message()));
    return finish();
  }
  if (!got_summary) {
    Fail(r, v1::RESULT_STATUS_ERROR,
         absl::StrCat("RunWriteSweep on ", src.name, ": stream ended without a summary"));
    return finish();
  }
  if (r->summary().status() != v1::RESULT_STATUS_OK) {
    Fail(r, r->summary().status() == v1::RESULT_STATUS_UNSPECIFIED ? v1::RESULT_STATUS_ERROR
                                                                   : r->summary().status(),
         absl::StrCat(src.name, "->", dst.name, ": ", r->summary().error()));
    return finish();
  }
  for (const auto* list : {&r->sizes(), &r->reverse_sizes()}) {
    for (const auto& s : *list) {
      if (s.status() != v1::RESULT_STATUS_OK) {
        Fail(r, v1::RESULT_STATUS_FAILED,
             absl::StrCat("size ", s.size_bytes(), " B", list == &r->sizes() ? "" : " (reverse)", ": ",
                          s.error().empty() ? "failed" : s.error()));
        return finish();
      }
    }
  }
  r->set_status(v1::RESULT_STATUS_OK);
  finish();
}

}  // namespace gdrbench::controller::run
