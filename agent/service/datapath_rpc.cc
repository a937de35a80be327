// OpenTarget, ConnectTarget, RunWriteSweep, VerifyTarget, CloseTarget: the
// data path RPCs. Validation and conversion here; the test itself in
// bench::InitiatorSession / TargetSession (agent/bench/session.h); targets
// and their leases in target_registry.cc.
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/bench/session.h"
#include "agent/bench/write_sweep.h"
#include "agent/service/agent_handler.h"
#include "agent/service/sweep_convert.h"
#include "agent/service/target_registry.h"
#include "agent/verbs/cm.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {
namespace {

// The perftest line for the whole sweep: "-a" when the sizes are perftest's.
std::string SweepPerftestCommand(const bench::SweepOptions& o, const std::string& device,
                                 int gid_index, const std::string& server) {
  const bool lat = o.test == bench::TestKind::kWriteLat;
  std::string one = lat ? bench::PerftestLatCommand(o, o.sizes_bytes.front(), device, gid_index, server)
                        : bench::PerftestCommand(o, o.sizes_bytes.front(), device, gid_index, server);
  if (o.sizes_bytes == bench::AllSizes()) {
    std::string needle = absl::StrCat(" -s ", o.sizes_bytes.front());
    if (auto pos = one.find(needle); pos != std::string::npos) one.replace(pos, needle.size(), " -a");
  }
  return one;
}

// How long the initiator of a bidirectional test waits, after its own
// sweep, for the target's "reverse sweep done": the sweeps run in lock-step
// (write_sweep.h), so what is left is the target's last verify pass; a
// target that died is heard sooner (the keep-alive, control.h).
int ReverseWaitMs(const bench::SweepOptions& o) {
  return static_cast<int>(std::min<int64_t>(bench::BarrierTimeoutNs(o) / 1'000'000, 3'600'000));
}

// Everything a RunWriteSweep request must get right, before any hardware.
absl::StatusOr<bench::InitiatorSpec> ValidateSweep(const v1::RunWriteSweepRequest& r,
                                                   const bench::SweepOptions& options) {
  bench::InitiatorSpec spec;
  spec.options = options;
  GDR_ASSIGN_OR_RETURN(spec.memory,
                       memory::MemorySpec::Parse(r.params().memory().empty() ? "host" : r.params().memory()));
  GDR_RETURN_IF_ERROR(CheckMemoryForTest(spec.memory, options));
  spec.cm = FromProto(r.params().cm());
  if (spec.cm == bench::CmMode::kAuto) spec.cm = bench::CmMode::kRdmaCm;  // pre-oob controllers
  if (spec.cm == bench::CmMode::kOob) {
    GDR_ASSIGN_OR_RETURN(spec.target, FromProto(r.target_oob()));
  } else {
    if (r.target_address().empty()) {
      return absl::InvalidArgumentError("no target_address given (the target's rdma_cm address)");
    }
    GDR_RETURN_IF_ERROR(verbs::ParseSockAddr(r.target_address(), 0).status());
    if (r.target_cm_port() == 0 || r.target_cm_port() > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("target_cm_port ", r.target_cm_port(), " is not a port (1 .. 65535)"));
    }
    spec.target_address = r.target_address();
    spec.target_port = static_cast<uint16_t>(r.target_cm_port());
  }
  if (!r.bind_address().empty()) GDR_RETURN_IF_ERROR(verbs::ParseSockAddr(r.bind_address(), 0).status());
  spec.bind_address = r.bind_address();
  if (static_cast<uint32_t>(r.remote_buffers_size()) != options.qps) {
    return absl::InvalidArgumentError(absl::StrCat(r.remote_buffers_size(),
                                                   " remote buffers for ", options.qps,
                                                   " QPs: give one per QP (from OpenTarget)"));
  }
  for (const v1::RemoteBuffer& b : r.remote_buffers()) {
    if (b.addr() == 0 || b.length_bytes() == 0) {
      return absl::InvalidArgumentError("a remote buffer has no address or length");
    }
    if (b.length_bytes() > bench::kMaxBufferBytes / options.qps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "remote buffers of ", b.length_bytes(), " B x ", options.qps,
          " QPs exceed the limit of ", bench::kMaxBufferBytes, " B"));
    }
    spec.remote.push_back(bench::RemoteSlice{b.addr(), b.rkey(), b.length_bytes()});
  }
  return spec;
}

void FillPath(const bench::InitiatorSession& in, v1::SweepSummary& summary) {
  const verbs::PathInfo& path = in.path();
  summary.set_memory_kind(in.memory_kind());
  summary.set_registration(in.registration());
  summary.set_port(path.port);
  summary.set_gid_index(path.gid_index);
  summary.set_gid(path.gid);
  summary.set_gid_type(path.gid_type);
  summary.set_local_address(path.local_address);
  summary.set_remote_address(path.remote_address);
  summary.set_path_mtu_bytes(path.path_mtu_bytes);
}

// What the sizes of one sweep added up to, and its first error.
struct SweepTally {
  uint64_t total_bytes = 0;
  int64_t total_ns = 0;
  double best = 0;
  std::string first_error;
  bool caller_gone = false;
  bool lockstep = false;

  // One size's outcome, sent to the caller.
  void Add(const bench::SizeOutcome& o, const std::function<bool(const v1::RunWriteSweepResponse&)>& emit) {
    v1::RunWriteSweepResponse msg;
    ToProto(o, msg.mutable_size());
    lockstep = lockstep && o.lockstep;
    if (o.ok) {
      total_bytes += o.iterations * o.size_bytes;
      total_ns += o.duration_ns;
      best = std::max(best, o.bw_avg_gbps);
    } else if (first_error.empty()) {
      first_error = o.error;
    }
    if (!emit(msg)) caller_gone = true;
  }
};

// The port's fault, else the test's CQs' and QPs'; empty while none.
std::string Fault(const verbs::PortWatch& port, const verbs::DataWatch& data) {
  std::string f = port.fault();
  return f.empty() ? data.fault() : f;
}

// A bidirectional test's end: waits for the target's reverse sweep and, with
// verify, checks its data into the summary's reverse_checks.
void FinishReverse(bench::InitiatorSession& in, const bench::SweepOptions& options,
                   const verbs::PortWatch& watch, const verbs::DataWatch& data_watch, SweepTally& t,
                   v1::SweepSummary& summary) {
  absl::Status w = in.WaitReverseDone(watch.stop(), ReverseWaitMs(options));
  if (std::string f = Fault(watch, data_watch); !w.ok() && !f.empty()) {
    t.first_error = absl::StrCat("bidirectional: waiting for the reverse direction: ", f);
  } else if (!w.ok()) {
    t.first_error = absl::StrCat("bidirectional: ", w.message());
  } else if (options.verify) {
    for (const bench::ReverseCheck& c : in.CheckReverse()) {
      v1::SizeResult* rc = summary.add_reverse_checks();
      rc->set_size_bytes(c.size_bytes);
      rc->set_verified(c.verified);
      rc->set_verify_first_bad_offset(c.first_bad_offset);
      rc->set_status(c.verified ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
      rc->set_error(c.error);
      if (!c.verified && t.first_error.empty()) {
        t.first_error = absl::StrCat("reverse direction (target -> initiator): ", c.error);
      }
    }
  }
}

// The summary's totals and status once `ran` sizes ran.
void SetOutcome(const SweepTally& t, size_t ran, const bench::SweepOptions& options,
                v1::SweepSummary& summary) {
  summary.set_sizes_in_lockstep(t.lockstep && ran == options.sizes_bytes.size());
  summary.set_total_bytes(t.total_bytes);
  summary.set_duration_ns(t.total_ns);
  summary.set_bw_avg_gbps_best(t.best);
  if (!t.first_error.empty()) {
    summary.set_status(v1::RESULT_STATUS_FAILED);
    summary.set_error(t.first_error);
  } else if (ran < options.sizes_bytes.size()) {
    summary.set_status(v1::RESULT_STATUS_ERROR);
    summary.set_error(absl::StrCat("cancelled after ", ran, " of ", options.sizes_bytes.size(),
                                   " sizes (the caller went away or the deadline passed)"));
  } else {
    summary.set_status(v1::RESULT_STATUS_OK);
  }
}

// The summary before the test: the request's side of it.
void StartSummary(const v1::RunWriteSweepRequest& r, const bench::SweepOptions& options,
                  const bench::InitiatorSpec& spec, v1::SweepSummary& summary) {
  summary.set_device(r.device());
  summary.set_qps(options.qps);
  summary.set_cm(ToProto(spec.cm));
  summary.set_remote_address(spec.cm == bench::CmMode::kOob
                                 ? std::string("out of band")
                                 : absl::StrCat(r.target_address(), ":", r.target_cm_port()));
}

// Out of band: sends the initiator's QPs to the caller (the controller hands
// them to the target, ConnectTarget, which answers in band once its QPs are
// up) and waits for that answer. false: the caller went away.
absl::StatusOr<bool> ConnectOutOfBand(bench::InitiatorSession& in, const bench::InitiatorSpec& spec,
                                      const std::function<bool(const v1::RunWriteSweepResponse&)>& emit,
                                      const std::atomic<bool>& cancelled, v1::SweepSummary& summary) {
  std::optional<bench::OobPeer> me = in.connect_info();
  if (!me.has_value()) return true;
  v1::RunWriteSweepResponse msg;
  ToProto(*me, in.gid_choice(), msg.mutable_connect());
  summary.set_gid_choice(in.gid_choice());
  if (!emit(msg)) return false;
  absl::Status ready = in.WaitReady(cancelled, spec.timeout_ms);
  if (!ready.ok()) return absl::Status(ready.code(), absl::StrCat("out-of-band connect: ", ready.message()));
  return true;
}

}  // namespace

TargetRegistry& AgentHandler::targets() {
  std::call_once(targets_once_, [this] {
    targets_ = std::make_shared<TargetRegistry>(
        [this](const std::string& device) {
          return CheckDevice(*sessions_, config_.devices, device);
        },
        sessions_, TargetLimits{}, nullptr, true,
        [this](const std::string& device, uint32_t port) {
          return ReadTestCounters(device, port);
        });
  });
  return *targets_;
}

absl::StatusOr<v1::OpenTargetResponse> AgentHandler::OpenTarget(const v1::OpenTargetRequest& r) {
  return targets().Open(r);
}

absl::StatusOr<v1::ConnectTargetResponse> AgentHandler::ConnectTarget(
    const v1::ConnectTargetRequest& r) {
  GDR_RETURN_IF_ERROR(targets().Connect(r));
  return v1::ConnectTargetResponse{};
}

absl::StatusOr<v1::VerifyTargetResponse> AgentHandler::VerifyTarget(
    const v1::VerifyTargetRequest& r) {
  // The initiator returns only after the reverse sweep of a bidirectional
  // test ended, so this wait is short; it stays well inside an RPC deadline.
  return targets().Verify(r, std::chrono::seconds(5));
}

absl::StatusOr<v1::CloseTargetResponse> AgentHandler::CloseTarget(const v1::CloseTargetRequest& r) {
  return targets().Close(r.target_id());
}

absl::Status AgentHandler::RunWriteSweep(
    const v1::RunWriteSweepRequest& r,
    const std::function<bool(const v1::RunWriteSweepResponse&)>& emit,
    const std::atomic<bool>& cancelled) {
  // Validation: every field, before any hardware is touched.
  GDR_ASSIGN_OR_RETURN(bench::SweepOptions options, ToSweepOptions(r.params()));
  GDR_ASSIGN_OR_RETURN(bench::InitiatorSpec spec, ValidateSweep(r, options));
  GDR_ASSIGN_OR_RETURN(spec.device, CheckDevice(*sessions_, config_.devices, r.device()));

  v1::RunWriteSweepResponse summary_msg;
  v1::SweepSummary& summary = *summary_msg.mutable_summary();
  StartSummary(r, options, spec, summary);
  auto fail = [&](const absl::Status& st) {
    // A test that could not run is data, not a failed RPC.
    summary.set_status(v1::RESULT_STATUS_ERROR);
    summary.set_error(std::string(st.message()));
    spdlog::warn("sweep {} -> {}: {}", r.device(), summary.remote_address(),
                 std::string(st.message()));
    emit(summary_msg);
    return absl::OkStatus();
  };
  auto session = sessions_->OpenInitiator(spec);
  if (!session.ok()) return fail(session.status());
  bench::InitiatorSession& in = **session;
  absl::StatusOr<bool> connected = ConnectOutOfBand(in, spec, emit, cancelled, summary);
  if (!connected.ok()) return fail(connected.status());
  if (!*connected) return absl::OkStatus();
  FillPath(in, summary);
  const verbs::PathInfo& path = in.path();
  const std::string server = spec.cm == bench::CmMode::kOob ? "" : r.target_address();
  summary.set_perftest_command(SweepPerftestCommand(options, r.device(), path.gid_index, server));

  // The port's counters around the test: sampled once connected (the
  // target's window, OpenTarget to CloseTarget, holds the connection too).
  const uint32_t counter_port = path.port != 0 ? path.port : 1;
  const counters::Sample counters_before = ReadTestCounters(r.device(), counter_port);
  bench::SweepIdentity ident{r.device(), path.gid_index, server};
  SweepTally tally;
  tally.lockstep = options.bidirectional;
  auto on_size = [&](const bench::SizeOutcome& o) { tally.Add(o, emit); };
  // A port that goes down ends the test at once (IBV_EVENT_PORT_ERR), not
  // after the QP's retries, and so does an error event on the test's own CQs
  // or QPs (IBV_EVENT_CQ_ERR, QP fatal); the same flag carries the caller's
  // cancellation. Both watches go before the session does.
  std::unique_ptr<verbs::DataWatch> data_watch = sessions_->WatchData(in.data_objects(), cancelled);
  std::unique_ptr<verbs::PortWatch> watch =
      sessions_->WatchPort(r.device(), path.port != 0 ? path.port : 1, data_watch->stop());
  const bool latency = options.test == bench::TestKind::kWriteLat;
  size_t ran = latency ? in.RunLatency(ident, watch->stop(), on_size)
                       : in.RunSweep(ident, watch->stop(), on_size);
  if (std::string f = Fault(*watch, *data_watch); !f.empty()) {
    tally.first_error = absl::StrCat(f, "; ", ran, " of ", options.sizes_bytes.size(), " sizes ran");
  }
  if (options.bidirectional && !tally.caller_gone && tally.first_error.empty() &&
      ran == options.sizes_bytes.size()) {
    FinishReverse(in, options, *watch, *data_watch, tally, summary);
  }
  ToProto(counters::Diff(counters_before, ReadTestCounters(r.device(), counter_port)),
          summary.mutable_counters());
  SetOutcome(tally, ran, options, summary);
  spdlog::info("sweep {} -> {} ({}): {} of {} sizes{}, best {:.3f} Gb/s, {}{}{}", r.device(),
               path.remote_address, bench::CmModeName(spec.cm), ran, options.sizes_bytes.size(),
               summary.sizes_in_lockstep() ? " in lock-step with the reverse direction" : "", tally.best,
               v1::ResultStatus_Name(summary.status()), tally.first_error.empty() ? "" : ": ",
               tally.first_error);
  if (!tally.caller_gone) emit(summary_msg);
  const bool port_fault = !watch->fault().empty();
  watch.reset();
  data_watch.reset();
  if (port_fault) {
    // Tearing down QPs whose port is gone waits on the connection manager
    // (seconds in the lab); the test's answer is not held for it.
    background_.Start([s = std::move(*session), device = r.device()]() mutable {
      s.reset();
      spdlog::info("sweep on {}: torn down after its port fault", device);
    });
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::service
