#include "agent/bench/write_sweep.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

std::string DescribeFailure(const LoopResult& loop, uint64_t size) {
  switch (loop.outcome) {
    case LoopOutcome::kOk:
      return "";
    case LoopOutcome::kPostFailed:
      return absl::StrCat("ibv_post_send failed at ", size, " B on QP ", loop.failed_qp, ": ",
                          std::strerror(loop.error_code), " (errno ", loop.error_code, ")");
    case LoopOutcome::kPollFailed:
      return absl::StrCat("ibv_poll_cq failed at ", size, " B: errno ", loop.error_code);
    case LoopOutcome::kCompletionError:
      return absl::StrCat("completion error at ", size, " B on QP ", loop.failed_qp, ": ",
                          ibv_wc_status_str(static_cast<ibv_wc_status>(loop.error_code)),
                          " (status ", loop.error_code, ", vendor error 0x",
                          absl::Hex(loop.vendor_err), ") after ", loop.completed,
                          " completed WRs");
    case LoopOutcome::kStalled:
      return absl::StrCat("no completion for 30 s at ", size, " B (", loop.completed, " of ",
                          loop.posted, " WRs completed): the peer or the fabric stopped");
  }
  return "unknown loop outcome";
}

SizeOutcome Summarize(const LoopResult& loop, const LoopScratch& scratch, const LoopParams& p,
                      uint64_t size) {
  SizeOutcome out;
  out.size_bytes = size;
  out.iterations = loop.completed;
  if (loop.outcome != LoopOutcome::kOk) {
    out.error = DescribeFailure(loop, size);
    return out;
  }
  out.ok = true;
  out.duration_ns = loop.last_completion_ns - loop.first_post_ns;
  out.bw_avg_gbps = GbpsOf(loop.completed * size, out.duration_ns);
  out.msg_rate_mpps = MppsOf(loop.completed, out.duration_ns);
  uint64_t window = std::min<uint64_t>(uint64_t{p.tx_depth} * p.qps, loop.completed);
  out.bw_peak_gbps = PeakGbps(scratch.samples, loop.samples, size, window);
  // The peak of an interval can never be below the average over the whole
  // run only through sampling: the whole run is itself an interval.
  out.bw_peak_gbps = std::max(out.bw_peak_gbps, out.bw_avg_gbps);
  return out;
}

size_t RunSweep(const SweepOptions& o, const SweepEndpoint& ep, const SweepIdentity& id,
                const std::atomic<bool>& cancelled,
                const std::function<void(const SizeOutcome&)>& on_size) {
  BufferLayout layout = PlanLayout(o.sizes_bytes, o.verify);
  VerbsOps ops(ep.cq, o.post_list);
  LoopParams measured{.qps = o.qps,
                      .tx_depth = o.tx_depth,
                      .cq_moderation = o.cq_moderation,
                      .post_list = o.post_list,
                      .iterations = o.iterations,
                      .duration_ns = o.duration_ns};
  LoopScratch scratch;
  scratch.Prepare(measured);
  LoopScratch small;
  size_t ran = 0;
  for (size_t i = 0; i < o.sizes_bytes.size(); ++i) {
    if (cancelled.load()) break;
    uint64_t size = o.sizes_bytes[i];
    ops.Configure(ep.slices, static_cast<uint32_t>(size));
    SizeOutcome out;
    if (o.warmup_iterations > 0) {
      LoopParams warm = measured;
      warm.iterations = o.warmup_iterations;
      warm.duration_ns = 0;
      small.Prepare(warm);
      LoopResult w = RunWriteLoop(ops, warm, small);
      if (w.outcome != LoopOutcome::kOk) {
        out.size_bytes = size;
        out.error = absl::StrCat("warm-up: ", DescribeFailure(w, size));
      }
    }
    if (out.error.empty()) {
      LoopResult r = RunWriteLoop(ops, measured, scratch);
      out = Summarize(r, scratch, measured, size);
    }
    if (out.ok && o.verify) {
      // The pattern pass: one WR per QP from this size's verify region to
      // the same region of the remote slice.
      std::vector<QpTarget> regions = ep.slices;
      for (size_t q = 0; q < regions.size(); ++q) {
        regions[q].local_addr += layout.verify_offsets[i];
        regions[q].remote_addr += layout.verify_offsets[i];
        std::string err;
        uint64_t off = ep.local_base_offset_of_slice0 + q * ep.slice_bytes + layout.verify_offsets[i];
        if (!ep.fill_pattern(off, size, &err)) {
          out.ok = false;
          out.error = absl::StrCat("writing the verify pattern at ", size, " B: ", err);
          break;
        }
      }
      if (out.ok) {
        VerbsOps vops(ep.cq, 1);
        vops.Configure(regions, static_cast<uint32_t>(size));
        LoopParams vp{.qps = o.qps, .tx_depth = 1, .cq_moderation = 1, .post_list = 1,
                      .iterations = 1};
        small.Prepare(vp);
        LoopResult v = RunWriteLoop(vops, vp, small);
        if (v.outcome != LoopOutcome::kOk) {
          out.ok = false;
          out.error = absl::StrCat("verify pass: ", DescribeFailure(v, size));
        } else {
          out.pattern_written = true;
        }
      }
    }
    out.perftest_command = PerftestCommand(o, size, id.device, id.gid_index, id.server_address);
    ++ran;
    on_size(out);
    if (!out.ok) break;
  }
  return ran;
}

}  // namespace gdrbench::agent::bench
