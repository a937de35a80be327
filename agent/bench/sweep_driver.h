// The initiator's side of one test, as the agent's RunWriteSweep drives it:
// open the initiator session (SessionFactory, session.h), connect out of
// band when the target asked for it, watch the port and the test's own CQs
// and QPs, run the bandwidth or latency sweep, wait for (and with verify
// check) the reverse direction of a bidirectional test, and add up the
// outcome. Plain C++ (no protobuf: the service converts around it).
//
//   bench::SweepSink& sink = ...;   // the caller's side: emits, counters
//   bench::DriveInitiatorSweep(factory, spec, cancelled, sink, background);
//
// The sink hears each step in order: Connect (out of band only), Connected,
// Size per size, Measured, then Finished once, also when the test could not
// run (its outcome then says why); only a caller gone during the
// out-of-band exchange (Connect returned false) ends it without Finished. A
// test that fails is data in the outcome, never an error of this call.
// Thread safety: one call per test; the sink is called on the caller's
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/bench/session.h"
#include "common/background_jobs.h"

namespace gdrbench::agent::bench {

// How a test ended.
enum class SweepEnd {
  kOk,         // every size ran; no error
  kFailed,     // a size, the port, the CQs/QPs or the reverse direction failed
  kCancelled,  // fewer sizes than asked (the caller went away or the deadline passed)
  kNotRun,     // the session could not be opened or connected
};

struct SweepOutcome {
  SweepEnd end = SweepEnd::kOk;
  std::string error;  // the first error (kFailed), why (kCancelled, kNotRun)
  size_t sizes_ran = 0;
  bool sizes_in_lockstep = false;  // bidirectional: every size in lock-step with the reverse one
  uint64_t total_bytes = 0;        // the sizes that succeeded
  int64_t total_ns = 0;
  double bw_avg_gbps_best = 0;
  std::vector<ReverseCheck> reverse_checks;  // bidirectional with verify
  bool caller_gone = false;                  // a sink call returned false: send nothing more
};

// The caller's side of a test.
class SweepSink {
 public:
  virtual ~SweepSink() = default;
  // Out of band: this end's half of the exchange, for the target (the
  // controller's ConnectTarget), and how the GIDs were chosen. false: the
  // caller went away; the test ends there.
  virtual bool Connect(const OobPeer& me, const std::string& gid_choice) = 0;
  // Connected (out of band: the target answered ready): the path, before
  // the first size.
  virtual void Connected(const InitiatorSession& session) = 0;
  // One size's outcome. false: the caller went away; the test stops.
  virtual bool Size(const SizeOutcome& outcome) = 0;
  // The sizes and the reverse direction are done (the port's counters end
  // here), before the outcome is added up.
  virtual void Measured() = 0;
  virtual void Finished(const SweepOutcome& outcome) = 0;
};

// How long the initiator of a bidirectional test waits, after its own
// sweep, for the target's "reverse sweep done".
int ReverseWaitMs(const SweepOptions& options);

// The test of `spec` (its device resolved). `cancelled` stops it between
// sizes. The session is torn down on `background` once the sink heard
// Finished (tearing down QPs whose port is gone waits on the connection
// manager: seconds).
void DriveInitiatorSweep(SessionFactory& sessions, const InitiatorSpec& spec,
                         const std::atomic<bool>& cancelled, SweepSink& sink, BackgroundJobs& background);

}  // namespace gdrbench::agent::bench
