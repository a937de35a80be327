// Runs a sweep (warm-up, measured pass and, with verify, the pattern pass of
// each size) over QPs that are already connected, and turns loop results into
// per-size results with perftest's semantics. No protobuf here: the service
// converts SizeOutcome to v1::SizeResult.
// Thread safety: one sweep per thread; it owns the QPs and CQ while it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agent/bench/control.h"
#include "agent/bench/staging.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/verbs_ops.h"
#include "absl/strings/str_cat.h"
#include "agent/bench/write_lat.h"
#include "agent/bench/write_loop.h"

namespace gdrbench::agent::bench {

struct SizeOutcome {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;     // measured WRs, all QPs
  double bw_avg_gbps = 0;
  double bw_peak_gbps = 0;
  double msg_rate_mpps = 0;
  int64_t duration_ns = 0;     // first post to last completion
  bool ok = false;
  std::string error;           // "completion error at 65536 B on QP 0: remote access error ..."
  bool pattern_written = false;  // the verify pass wrote this size's region
  // Bidirectional: both directions' measured passes of this size started
  // and ended together (the per-size barriers, RunSweep).
  bool lockstep = false;
  std::string perftest_command;
  bool latency_test = false;     // write_lat: `latency` holds the result
  LatencyStats latency;
  // gpu-staged source: the GPU -> pinned host copy timed after the wire
  // pass (staging.h), and the BW of copy + wire.
  bool staged = false;
  uint64_t staged_copies = 0;
  double staged_copy_gbytes_per_s = 0;
  double staged_bw_avg_gbps = 0;
};

// Turns one measured loop into a result (pure; unit-tested).
SizeOutcome Summarize(const LoopResult& loop, const LoopScratch& scratch, const LoopParams& params,
                      uint64_t size_bytes);

// The message for a failed loop: the call or ibv_wc_status_str, the size and QP.
std::string DescribeFailure(const LoopResult& loop, uint64_t size_bytes);

// One direction of a test, as RunSweep sees it (Ops carries the CQs).
struct SweepEndpoint {
  // Per QP: the QP, the start of its local slice, and the remote slice.
  std::vector<QpTarget> slices;
  uint64_t slice_bytes = 0;
  // This direction's verify regions (per size, within a slice; empty
  // without verify) and the writer of their pattern into the local buffer
  // before the pattern pass (absolute buffer offset, length); it returns
  // false with `error` set.
  std::vector<uint64_t> verify_offsets;
  std::function<bool(uint64_t offset, uint64_t length, std::string* error)> fill_pattern;
  // A gpu-staged local buffer: its GPU -> host copy (staging.h); empty
  // otherwise. RunSweep times it after each size's measured pass.
  StageFn stage;
};

struct SweepIdentity {  // for the perftest command line
  std::string device;
  int gid_index = -1;
  std::string server_address;
};

// Runs every size in order (warm-up, measured pass, then with verify one
// WR per QP from this size's verify region to the same region of the remote
// slice) and calls `on_size` after each (with `endpoint.stage`, the staging
// copy of each size is timed after its measured pass: staging.h); stops
// after the first failed size (the QPs are in error state then) or when
// `cancelled`. A bidirectional sweep runs on both sides at once and meets
// the peer (control.h MeetPeer) after the warm-up and after the measured
// pass of every size, so the two directions' measured passes start and end
// together (perftest's duplex ctx_hand_shake; SizeOutcome::lockstep); a
// barrier that fails (the peer died, stopped or broke) fails the size.
// Returns the number of sizes that ran. Ops: the write loop's policy, the
// control messages' (control.h), plus
//   void Configure(const std::vector<QpTarget>& targets, uint32_t bytes, uint32_t post_list);
template <typename Ops>
size_t RunSweep(Ops& ops, const SweepOptions& options, const SweepEndpoint& endpoint,
                const SweepIdentity& identity, const std::atomic<bool>& cancelled,
                const std::function<void(const SizeOutcome&)>& on_size);

// The pattern pass of one size: fills the verify regions of every slice and
// writes each with one WR. Returns an empty string or the error.
template <typename Ops>
std::string RunPatternPass(Ops& ops, const SweepEndpoint& ep, uint32_t qps, uint64_t size,
                           uint64_t region_offset, LoopScratch& scratch) {
  std::vector<QpTarget> regions = ep.slices;
  for (size_t q = 0; q < regions.size(); ++q) {
    regions[q].local_addr += region_offset;
    regions[q].remote_addr += region_offset;
    std::string err;
    if (!ep.fill_pattern(q * ep.slice_bytes + region_offset, size, &err)) {
      return absl::StrCat("writing the verify pattern at ", size, " B: ", err);
    }
  }
  ops.Configure(regions, static_cast<uint32_t>(size), 1);
  LoopParams vp{.qps = qps, .tx_depth = 1, .cq_moderation = 1, .post_list = 1, .iterations = 1};
  scratch.Prepare(vp);
  LoopResult v = RunWriteLoop(ops, vp, scratch);
  if (v.outcome != LoopOutcome::kOk) return absl::StrCat("verify pass: ", DescribeFailure(v, size));
  return "";
}

// The staging copy of one measured size (staging.h); a failed copy fails
// the size with its reason.
template <typename Ops>
void TimeStagingOf(Ops& ops, const SweepEndpoint& ep, uint32_t qps, SizeOutcome* out) {
  StagingTiming t = TimeStaging(ep.stage, [&ops] { return ops.NowNs(); }, qps, ep.slice_bytes,
                                out->size_bytes, out->iterations, out->duration_ns);
  if (!t.ok) {
    out->ok = false;
    out->error = t.error;
    return;
  }
  out->staged = true;
  out->staged_copies = t.copies;
  out->staged_copy_gbytes_per_s = t.copy_gbytes_per_s;
  out->staged_bw_avg_gbps = t.staged_bw_avg_gbps;
}

// How long one side of a bidirectional test waits at a barrier for the
// other direction's pass of one size; a dead peer is heard sooner (the
// keep-alive, control.h).
inline int64_t BarrierTimeoutNs(const SweepOptions& o) {
  return o.duration_ns > 0 ? o.duration_ns + 60'000'000'000 : 600'000'000'000;
}

// MeetPeer for size `i`; "" or the failure, naming the size and the barrier.
template <typename Ops>
std::string Barrier(Ops& ops, const SweepOptions& o, size_t i, bool end,
                    const std::atomic<bool>& cancelled) {
  absl::Status st = MeetPeer(ops, i, end, cancelled, BarrierTimeoutNs(o));
  if (st.ok()) return "";
  return absl::StrCat("bidirectional ", end ? "end" : "start", " barrier at ", o.sizes_bytes[i],
                      " B: ", st.message());
}

template <typename Ops>
size_t RunSweep(Ops& ops, const SweepOptions& o, const SweepEndpoint& ep, const SweepIdentity& id,
                const std::atomic<bool>& cancelled,
                const std::function<void(const SizeOutcome&)>& on_size) {
  LoopParams measured{.qps = o.qps,
                      .tx_depth = o.tx_depth,
                      .cq_moderation = o.cq_moderation,
                      .post_list = o.post_list,
                      .iterations = o.iterations,
                      .duration_ns = o.duration_ns,
                      .abort = &cancelled};
  LoopScratch scratch;
  scratch.Prepare(measured);
  LoopScratch small;
  size_t ran = 0;
  for (size_t i = 0; i < o.sizes_bytes.size(); ++i) {
    if (cancelled.load()) break;
    const uint64_t size = o.sizes_bytes[i];
    ops.Configure(ep.slices, static_cast<uint32_t>(size), o.post_list);
    measured.stall_timeout_ns = StallTimeoutNs(size, o.qps, o.cq_moderation, o.iterations);
    SizeOutcome out;
    if (o.warmup_iterations > 0) {
      LoopParams warm = measured;
      warm.iterations = o.warmup_iterations;
      warm.duration_ns = 0;
      warm.abort = &cancelled;
      small.Prepare(warm);
      LoopResult w = RunWriteLoop(ops, warm, small);
      if (w.outcome != LoopOutcome::kOk) {
        out.size_bytes = size;
        out.error = absl::StrCat("warm-up: ", DescribeFailure(w, size));
      }
    }
    if (out.error.empty() && o.bidirectional) out.error = Barrier(ops, o, i, false, cancelled);
    if (out.error.empty()) {
      LoopResult r = RunWriteLoop(ops, measured, scratch);
      out = Summarize(r, scratch, measured, size);
      if (out.ok && o.bidirectional) {
        out.error = Barrier(ops, o, i, true, cancelled);
        out.ok = out.error.empty();
        out.lockstep = out.ok;
      }
    }
    out.size_bytes = size;
    if (out.ok && ep.stage) TimeStagingOf(ops, ep, o.qps, &out);
    if (out.ok && o.verify) {
      out.error = RunPatternPass(ops, ep, o.qps, size, ep.verify_offsets[i], small);
      out.ok = out.error.empty();
      out.pattern_written = out.ok;
    }
    out.perftest_command = PerftestCommand(o, size, id.device, id.gid_index, id.server_address);
    ++ran;
    on_size(out);
    if (!out.ok) break;
  }
  return ran;
}

}  // namespace gdrbench::agent::bench
