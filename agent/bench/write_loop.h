// The hot loop of the RDMA WRITE benchmark: the only caller of
// ibv_post_send / ibv_poll_cq (through the Ops policy), perftest write_bw's
// semantics, and nothing inside it allocates, locks, logs or builds a Status.
//
// Ops is a policy type with these members (VerbsOps in verbs_ops.h is the
// real one; the unit tests use a fake clock and a fake NIC):
//   // Posts `count` chained WRITEs on QP `qp` (WRs number `first` ..
//   // first+count-1 of that QP); the last one is signalled when `signal`,
//   // carrying wr_id. Returns 0 or an errno value.
//   int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id);
//   // ibv_poll_cq semantics: completions written to wc, their number, or < 0.
//   int Poll(int max, ibv_wc* wc);
//   int64_t NowNs();   // monotonic
//
// Selective signalling: only every cq_moderation-th WR of a QP (and the last
// of a run: in duration mode one extra WR after the deadline when the last
// one posted was unsignalled) asks for a completion. Its wr_id encodes (QP, WRs of that QP done
// once it completes), and RC completes a QP's WRs in order, so one completion
// accounts exactly for the unsignalled WRs before it. The send queue slot of
// an unsignalled WR is only known free after such a completion, which is why
// outstanding WRs per QP are bounded by tx_depth counting from the last one.
//
// Thread safety: one thread runs a loop; Ops and scratch belong to it.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "agent/bench/bw_math.h"

namespace gdrbench::agent::bench {

struct LoopParams {
  uint32_t qps = 1;
  uint32_t tx_depth = 128;
  uint32_t cq_moderation = 100;  // <= tx_depth, a multiple of post_list
  uint32_t post_list = 1;
  uint64_t iterations = 0;       // WRs per QP; 0 selects duration mode
  int64_t duration_ns = 0;       // duration mode: post until this long after the first post
  int64_t stall_timeout_ns = 30'000'000'000;  // no completion for this long: give up (StallTimeoutNs)
  // Set by another thread to end the loop (the caller went away, the target
  // is closed, the port went down). Read once per poll batch with a relaxed
  // load: a plain load of a line the setter writes once, so it costs the
  // loop nothing measurable and is heard within one poll (microseconds)
  // whether completions flow or not.
  const std::atomic<bool>* abort = nullptr;
};

// Preallocated by the caller (Prepare) so the loop itself never allocates.
struct LoopScratch {
  std::vector<uint64_t> posted;     // per QP
  std::vector<uint64_t> completed;  // per QP
  std::vector<uint8_t> tail_signalled;  // per QP: the last posted WR asked for a completion
  std::vector<Sample> samples;      // completion events, for the peak
  std::vector<ibv_wc> wc;           // poll batch

  // Sizes everything for `params`: one sample per signalled completion in
  // iteration mode, `max_samples` in duration mode (later events are not
  // recorded, which only narrows the peak search).
  void Prepare(const LoopParams& params, size_t max_samples = 1 << 20);
};

enum class LoopOutcome { kOk, kPostFailed, kPollFailed, kCompletionError, kStalled, kAborted };

struct LoopResult {
  LoopOutcome outcome = LoopOutcome::kOk;
  uint64_t posted = 0;     // WRs, all QPs
  uint64_t completed = 0;  // WRs, all QPs
  int64_t first_post_ns = 0;
  int64_t last_completion_ns = 0;
  size_t samples = 0;      // scratch.samples[0, samples) hold the events, [0] the first post
  // On failure: the errno of the post/poll, or the wc status and vendor error.
  int error_code = 0;
  uint32_t vendor_err = 0;
  uint32_t failed_qp = 0;
  int64_t stalled_ns = 0;  // kStalled: how long no completion had come
};

// The stall guard for one size. A completion is asked only every
// cq_moderation WRs of a QP, and the QPs share the wire, so the time between
// two completions grows with the size: at 8 MiB x 100 WRs one completion
// stands for 839 MB, 134 s at the 0.05 Gb/s that Soft-RoCE moved on a loaded
// lab host, where a flat 30 s ended such tests as stalls that were not
// (bench/datapath_vs_perftest.sh, 2026-12-01). The guard allows the larger
// of kMinStallTimeoutNs and that much data at kStallFloorGbps, the slowest
// link still called working. A peer that is gone ends sooner anyway: RC's
// retries give an error completion, a port that goes down is its event.
inline constexpr int64_t kMinStallTimeoutNs = 30'000'000'000;
inline constexpr double kStallFloorGbps = 0.01;
inline int64_t StallTimeoutNs(uint64_t size_bytes, uint32_t qps, uint32_t cq_moderation, uint64_t iterations) {
  const uint64_t wrs = iterations > 0 ? std::min<uint64_t>(cq_moderation, iterations) : cq_moderation;
  const double batch_bits = 8.0 * static_cast<double>(size_bytes) * static_cast<double>(wrs) * qps;
  const double ns = batch_bits / kStallFloorGbps;  // bits / (Gbit/s) = ns
  return ns > static_cast<double>(kMinStallTimeoutNs) ? static_cast<int64_t>(ns) : kMinStallTimeoutNs;
}

inline constexpr int kPollBatch = 16;
// Bit 47 of a wr_id: set on control SENDs and keep-alives (verbs_ops.h
// kControlWrIdBit), never on a loop WR (whose done count stays below 2^47).
inline constexpr uint64_t kLoopForeignWrIdBit = uint64_t{1} << 47;

inline uint64_t EncodeWrId(uint32_t qp, uint64_t done) { return (uint64_t{qp} << 48) | done; }
inline uint32_t WrIdQp(uint64_t wr_id) { return static_cast<uint32_t>(wr_id >> 48); }
inline uint64_t WrIdDone(uint64_t wr_id) { return wr_id & ((uint64_t{1} << 48) - 1); }

inline void LoopScratch::Prepare(const LoopParams& p, size_t max_samples) {
  posted.assign(p.qps, 0);
  completed.assign(p.qps, 0);
  tail_signalled.assign(p.qps, 1);
  size_t events = max_samples;
  if (p.iterations > 0) {
    events = static_cast<size_t>(p.qps) * (p.iterations / p.cq_moderation + 2) + 1;
  }
  samples.assign(events + 1, Sample{});
  wc.assign(kPollBatch, ibv_wc{});
}

template <typename Ops>
LoopResult RunWriteLoop(Ops& ops, const LoopParams& p, LoopScratch& s) {
  LoopResult r;
  const bool duration_mode = p.iterations == 0;
  for (uint32_t q = 0; q < p.qps; ++q) {
    s.posted[q] = s.completed[q] = 0;
    s.tail_signalled[q] = 1;
  }
  bool stop_posting = false;
  int64_t deadline = 0;
  uint64_t idle_polls = 0;
  int64_t last_progress = 0;

  r.first_post_ns = ops.NowNs();
  deadline = r.first_post_ns + p.duration_ns;
  last_progress = r.first_post_ns;
  s.samples[0] = Sample{r.first_post_ns, 0, 0};
  size_t nsamples = 1;

  for (;;) {
    if (p.abort != nullptr && p.abort->load(std::memory_order_relaxed)) {
      r.outcome = LoopOutcome::kAborted;
      goto done;
    }
    bool busy = false;
    for (uint32_t q = 0; q < p.qps; ++q) {
      for (;;) {
        uint64_t posted = s.posted[q];
        // Duration mode stops at the deadline; a QP whose last WR was
        // unsignalled gets one more, signalled, so its tail completes.
        bool more = duration_mode ? (!stop_posting || !s.tail_signalled[q])
                                  : posted < p.iterations;
        if (!more) break;
        busy = true;
        if (posted + p.post_list - s.completed[q] > p.tx_depth) break;
        uint64_t next = posted + p.post_list;
        bool signal = next % p.cq_moderation == 0 || (!duration_mode && next == p.iterations) ||
                      stop_posting;
        if (int rc = ops.Post(q, posted, p.post_list, signal, EncodeWrId(q, next)); rc != 0) {
          r.outcome = LoopOutcome::kPostFailed;
          r.error_code = rc;
          r.failed_qp = q;
          goto done;
        }
        s.posted[q] = next;
        s.tail_signalled[q] = signal;
        r.posted += p.post_list;
      }
      if (s.completed[q] != s.posted[q]) busy = true;
    }
    if (!busy) break;

    int n = ops.Poll(kPollBatch, s.wc.data());
    if (n < 0) {
      r.outcome = LoopOutcome::kPollFailed;
      r.error_code = -n;
      goto done;
    }
    if (n == 0) {
      // Rare clock reads while idle: the stall guard only.
      if ((++idle_polls & 0xFFFF) == 0) {
        int64_t now = ops.NowNs();
        if (now - last_progress > p.stall_timeout_ns) {
          r.outcome = LoopOutcome::kStalled;
          r.stalled_ns = now - last_progress;
          goto done;
        }
        if (duration_mode && now >= deadline) stop_posting = true;
      }
      continue;
    }
    {
      int64_t now = ops.NowNs();
      for (int i = 0; i < n; ++i) {
        const ibv_wc& wc = s.wc[i];
        // A control message's or keep-alive's late completion (control.h) is
        // not a WRITE of this loop.
        if ((wc.wr_id & kLoopForeignWrIdBit) != 0 && wc.status == IBV_WC_SUCCESS) continue;
        uint32_t q = WrIdQp(wc.wr_id);
        if (wc.status != IBV_WC_SUCCESS || q >= p.qps) {
          r.outcome = LoopOutcome::kCompletionError;
          r.error_code = wc.status == IBV_WC_SUCCESS ? IBV_WC_GENERAL_ERR : wc.status;
          r.vendor_err = wc.vendor_err;
          r.failed_qp = q;
          goto done;
        }
        uint64_t done_count = WrIdDone(wc.wr_id);
        r.completed += done_count - s.completed[q];
        s.completed[q] = done_count;
      }
      r.last_completion_ns = now;
      last_progress = now;
      idle_polls = 0;
      // `posted` counts only WRs posted before `now` was read: the peak's bound.
      if (nsamples < s.samples.size()) s.samples[nsamples++] = Sample{now, r.completed, r.posted};
      if (duration_mode && now >= deadline) stop_posting = true;
    }
  }
done:
  r.samples = nsamples;
  return r;
}

}  // namespace gdrbench::agent::bench
