// The write_lat sweep of one side: every size of the options in order, a
// ping-pong of `iterations` exchanges each (write_lat.h), the initiator
// posting first and reporting perftest's statistics; the target answers.
// Thread safety: one thread per side.
#pragma once

#include <atomic>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/write_lat.h"
#include "agent/bench/write_sweep.h"

namespace gdrbench::agent::bench {

// One side's buffer for the sweep: QP 0's slice of the local buffer (send
// area at 0, receive area at layout.recv_offset) and the peer's slice.
struct LatencyEndpoint {
  QpTarget qp;            // local_addr / remote_addr: the slice starts
  uint64_t recv_offset = 0;
  bool posts_first = false;
};

inline const char* PingPongOutcomeText(PingPongOutcome o) {
  switch (o) {
    case PingPongOutcome::kOk: return "ok";
    case PingPongOutcome::kPostFailed: return "ibv_post_send failed";
    case PingPongOutcome::kCompletionError: return "completion error";
    case PingPongOutcome::kStalled: return "no answer from the peer for 30 s";
    case PingPongOutcome::kAborted: return "aborted";
  }
  return "?";
}

template <typename Ops>
size_t RunLatencySweep(Ops& ops, const SweepOptions& o, const LatencyEndpoint& ep,
                       const SweepIdentity& id, const std::atomic<bool>& cancelled,
                       const std::atomic<bool>* abort,
                       const std::function<void(const SizeOutcome&)>& on_size,
                       int64_t stall_timeout_ns = 30'000'000'000) {
  std::vector<int64_t> post_ns(o.iterations);
  uint64_t first = 1;
  size_t ran = 0;
  auto* local = reinterpret_cast<uint8_t*>(ep.qp.local_addr);
  for (uint64_t size : o.sizes_bytes) {
    if (cancelled.load()) break;
    PingPongSide side{.qp = ep.qp,
                      .poll_byte = local + ep.recv_offset + size - 1,
                      .post_byte = local + size - 1,
                      .posts_first = ep.posts_first};
    side.qp.remote_addr += ep.recv_offset;
    ops.SetInline(size <= o.inline_size);
    PingPongResult r = RunPingPong(ops, side, static_cast<uint32_t>(size), o.iterations, first,
                                   post_ns, stall_timeout_ns, abort);
    first += o.iterations;
    SizeOutcome out;
    out.size_bytes = size;
    out.latency_test = true;
    out.iterations = r.posted;
    if (r.outcome == PingPongOutcome::kOk) {
      out.ok = true;
      out.latency = LatencyFromPostTimes(post_ns);
      out.duration_ns = post_ns.empty() ? 0 : post_ns.back() - post_ns.front();
    } else {
      out.error = absl::StrCat("write_lat at ", size, " B after ", r.posted, " of ", o.iterations,
                               " exchanges: ", PingPongOutcomeText(r.outcome));
      if (r.outcome == PingPongOutcome::kCompletionError) {
        absl::StrAppend(&out.error, ": ",
                        ibv_wc_status_str(static_cast<ibv_wc_status>(r.error_code)), " (status ",
                        r.error_code, ")");
      } else if (r.outcome == PingPongOutcome::kPostFailed) {
        absl::StrAppend(&out.error, ": ", std::strerror(r.error_code));
      }
    }
    out.perftest_command = PerftestLatCommand(o, size, id.device, id.gid_index, id.server_address);
    ++ran;
    on_size(out);
    if (!out.ok) break;
  }
  return ran;
}

}  // namespace gdrbench::agent::bench
