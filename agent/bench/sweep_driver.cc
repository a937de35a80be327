#include "agent/bench/sweep_driver.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {
namespace {

// The port's fault, else the test's CQs' and QPs'; empty while none.
std::string Fault(const verbs::PortWatch& port, const verbs::DataWatch& data) {
  std::string f = port.fault();
  return f.empty() ? data.fault() : f;
}

// What the sizes of one sweep added up to, and its first error.
struct Tally {
  SweepOutcome out;

  void Add(const SizeOutcome& o, SweepSink& sink) {
    out.sizes_in_lockstep = out.sizes_in_lockstep && o.lockstep;
    if (o.ok) {
      out.total_bytes += o.iterations * o.size_bytes;
      out.total_ns += o.duration_ns;
      out.bw_avg_gbps_best = std::max(out.bw_avg_gbps_best, o.bw_avg_gbps);
    } else if (out.error.empty()) {
      out.error = o.error;
    }
    if (!sink.Size(o)) out.caller_gone = true;
  }
};

// A test that could not run: the sink hears why.
void NotRun(SweepSink& sink, const absl::Status& st) {
  SweepOutcome out;
  out.end = SweepEnd::kNotRun;
  out.error = std::string(st.message());
  sink.Finished(out);
}

// Out of band: hands the initiator's QPs to the sink (the controller passes
// them to the target, ConnectTarget, which answers in band once its QPs are
// up) and waits for that answer. A held target (spec.wait_for_start), in
// either mode: waits for its kReady, which comes when the controller starts
// the test (a test before it may be moving data on these NICs meanwhile),
// bounded by the call's deadline (`cancelled`). false: the caller went away.
absl::StatusOr<bool> ConnectOutOfBand(InitiatorSession& in, const InitiatorSpec& spec,
                                      const std::atomic<bool>& cancelled, SweepSink& sink) {
  std::optional<OobPeer> me = in.connect_info();
  if (!me.has_value() && !spec.wait_for_start) return true;
  if (me.has_value() && !sink.Connect(*me, in.gid_choice())) return false;
  const int timeout_ms = spec.wait_for_start ? INT32_MAX : spec.timeout_ms;
  absl::Status ready = in.WaitReady(cancelled, timeout_ms);
  if (!ready.ok()) {
    return absl::Status(ready.code(), absl::StrCat(spec.wait_for_start ? "waiting for the target's start: "
                                                                       : "out-of-band connect: ",
                                                   ready.message()));
  }
  return true;
}

// A bidirectional test's end: waits for the target's reverse sweep and, with
// verify, checks its data.
void FinishReverse(InitiatorSession& in, const SweepOptions& options, const verbs::PortWatch& watch,
                   const verbs::DataWatch& data_watch, SweepOutcome& t) {
  absl::Status w = in.WaitReverseDone(watch.stop(), ReverseWaitMs(options));
  if (std::string f = Fault(watch, data_watch); !w.ok() && !f.empty()) {
    t.error = absl::StrCat("bidirectional: waiting for the reverse direction: ", f);
  } else if (!w.ok()) {
    t.error = absl::StrCat("bidirectional: ", w.message());
  } else if (options.verify) {
    for (ReverseCheck& c : in.CheckReverse()) {
      if (!c.verified && t.error.empty()) {
        t.error = absl::StrCat("reverse direction (target -> initiator): ", c.error);
      }
      t.reverse_checks.push_back(std::move(c));
    }
  }
}

// How the test ended once `ran` sizes ran.
void SetEnd(size_t ran, const SweepOptions& options, SweepOutcome& t) {
  t.sizes_ran = ran;
  t.sizes_in_lockstep = t.sizes_in_lockstep && ran == options.sizes_bytes.size();
  if (!t.error.empty()) {
    t.end = SweepEnd::kFailed;
  } else if (ran < options.sizes_bytes.size()) {
    t.end = SweepEnd::kCancelled;
    t.error = absl::StrCat("cancelled after ", ran, " of ", options.sizes_bytes.size(),
                           " sizes (the caller went away or the deadline passed)");
  } else {
    t.end = SweepEnd::kOk;
  }
}

}  // namespace

// The sweeps run in lock-step (write_sweep.h), so what is left after the
// initiator's own sweep is the target's last verify pass; a target that
// died is heard sooner (the keep-alive, control.h).
int ReverseWaitMs(const SweepOptions& o) {
  return static_cast<int>(std::min<int64_t>(BarrierTimeoutNs(o) / 1'000'000, 3'600'000));
}

void DriveInitiatorSweep(SessionFactory& sessions, const InitiatorSpec& spec,
                         const std::atomic<bool>& cancelled, SweepSink& sink, BackgroundJobs& background) {
  const SweepOptions& options = spec.options;
  auto session = sessions.OpenInitiator(spec);
  if (!session.ok()) return NotRun(sink, session.status());
  InitiatorSession& in = **session;
  absl::StatusOr<bool> connected = ConnectOutOfBand(in, spec, cancelled, sink);
  if (!connected.ok()) return NotRun(sink, connected.status());
  if (!*connected) return;
  sink.Connected(in);
  const verbs::PathInfo& path = in.path();
  const std::string& device = spec.device.name;
  SweepIdentity ident{device, path.gid_index, spec.cm == CmMode::kOob ? "" : spec.target_address};
  Tally tally;
  tally.out.sizes_in_lockstep = options.bidirectional;
  auto on_size = [&](const SizeOutcome& o) { tally.Add(o, sink); };
  // A port that goes down ends the test at once (IBV_EVENT_PORT_ERR), not
  // after the QP's retries, and so does an error event on the test's own CQs
  // or QPs (IBV_EVENT_CQ_ERR, QP fatal); the same flag carries the caller's
  // cancellation. Both watches go before the session does.
  std::unique_ptr<verbs::DataWatch> data_watch = sessions.WatchData(in.data_objects(), cancelled);
  std::unique_ptr<verbs::PortWatch> watch =
      sessions.WatchPort(device, path.port != 0 ? path.port : 1, data_watch->stop());
  const size_t ran = options.test == TestKind::kWriteLat ? in.RunLatency(ident, watch->stop(), on_size)
                                                         : in.RunSweep(ident, watch->stop(), on_size);
  SweepOutcome& t = tally.out;
  if (std::string f = Fault(*watch, *data_watch); !f.empty()) {
    t.error = absl::StrCat(f, "; ", ran, " of ", options.sizes_bytes.size(), " sizes ran");
  }
  if (options.bidirectional && !t.caller_gone && t.error.empty() && ran == options.sizes_bytes.size()) {
    FinishReverse(in, options, *watch, *data_watch, t);
  }
  sink.Measured();
  SetEnd(ran, options, t);
  sink.Finished(t);
  const bool port_fault = !watch->fault().empty();
  watch.reset();
  data_watch.reset();
  // The answer is complete: the teardown (rdma_cm's disconnect, QPs, MR,
  // buffer; with a port gone it waits on the connection manager, seconds in
  // the lab) does not hold up the end of the call, which is on the sweep's
  // critical path (the controller's next step on these NICs waits for it).
  background.Start([s = std::move(*session), device, port_fault]() mutable {
    s.reset();
    if (port_fault) spdlog::info("sweep on {}: torn down after its port fault", device);
  });
}

}  // namespace gdrbench::agent::bench
