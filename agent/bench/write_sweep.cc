#include "agent/bench/write_sweep.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

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
      return absl::StrCat("no completion for ", absl::SixDigits(loop.stalled_ns / 1e9), " s at ", size, " B (",
                          loop.completed, " of ", loop.posted, " WRs completed): the peer or the fabric stopped");
    case LoopOutcome::kAborted:
      return absl::StrCat("stopped at ", size, " B (", loop.completed, " of ", loop.posted,
                          " WRs completed): cancelled");
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

}  // namespace gdrbench::agent::bench
