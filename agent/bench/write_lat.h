// RC RDMA WRITE latency as perftest's ib_write_lat measures it
// (run_iter_lat_write and print_report_lat in perftest_resources.c and
// perftest_parameters.c):
//   - a ping-pong on one QP: each side WRITEs `size` bytes into the peer's
//     receive area, the last byte carrying a counter, and spins on the last
//     byte of its own receive area until the peer's next counter is there;
//     one side posts first, the other answers;
//   - every WRITE is signalled and its completion reaped before the next;
//   - the clock is read just before each post; a delta between two
//     consecutive posts is one round trip, and half of it is the latency;
//   - of the iterations-1 deltas, sorted, the largest 2 are dropped
//     (LAT_MEASURE_TAIL); t_min = the smallest, t_max = the first dropped-past
//     element (delta[n]), typical = the median (perftest's get_median: mean of
//     the two middle ones when n is even), average and stdev over the n kept,
//     99 % = delta[ceil(0.99 n)], 99.9 % = delta[ceil(0.999 n)]. (The stdev here is
//     exact; perftest truncates each deviation to a whole microsecond.)
// Counter values run 1..255 and never 0 across the whole sweep, so the
// untouched last byte of a larger size's receive area (zero) never reads as
// an answer. The hot loops follow write_loop.h's rules: no allocation, lock,
// log or Status inside.
// Thread safety: one thread per side.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/bench/verbs_ops.h"
#include "agent/bench/write_loop.h"

namespace gdrbench::agent::bench {

struct LatencyStats {
  double t_min_us = 0;
  double t_max_us = 0;
  double t_typical_us = 0;
  double t_avg_us = 0;
  double t_stdev_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  uint64_t samples = 0;  // deltas kept
};

// perftest's report over the post times of one side (ns, in post order).
// Needs at least 4 posts (3 deltas, 2 dropped); otherwise samples = 0.
LatencyStats LatencyFromPostTimes(const std::vector<int64_t>& post_ns);

// One side of the ping-pong, for one message size.
struct PingPongSide {
  QpTarget qp;                       // local send area -> the peer's receive area
  volatile uint8_t* poll_byte = nullptr;  // the last byte of this size in the local receive area
  uint8_t* post_byte = nullptr;      // the last byte of this size in the local send area
  bool posts_first = false;          // the initiator; the target answers
};

enum class PingPongOutcome { kOk, kPostFailed, kCompletionError, kStalled, kAborted };

struct PingPongResult {
  PingPongOutcome outcome = PingPongOutcome::kOk;
  uint64_t posted = 0;
  uint64_t received = 0;
  int error_code = 0;
};

// The counter value of message k (1-based) of the whole sweep: 1..255.
inline uint8_t PingValue(uint64_t k) { return static_cast<uint8_t>((k - 1) % 255 + 1); }

// Runs `iterations` exchanges of one size; `first_message` is the sweep-wide
// number of this size's first message (both sides count the same way).
// post_ns (size >= iterations) receives the clock before each post.
// `abort` (may be null) ends the wait for the peer (a port went down).
// Ops: Configure, Post, Poll, NowNs (write_sweep.h).
// Spins until `*byte == want`, reading the clock only now and then.
// Returns kOk, kStalled or kAborted.
template <typename Ops>
PingPongOutcome AwaitByte(Ops& ops, volatile uint8_t* byte, uint8_t want, int64_t stall_timeout_ns,
                          const std::atomic<bool>* abort) {
  uint64_t spins = 0;
  int64_t since = 0;
  while (*byte != want) {
    if ((++spins & 0xFFF) != 0) continue;
    int64_t now = ops.NowNs();
    if (since == 0) since = now;
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return PingPongOutcome::kAborted;
    if (now - since > stall_timeout_ns) return PingPongOutcome::kStalled;
  }
  return PingPongOutcome::kOk;
}

// Runs `iterations` exchanges of one size: the side that posts first sends
// message i after the peer's message i-1 arrived (and at the end waits for
// the peer's last), the other side sends message i after the peer's message
// i. `first_message` is the sweep-wide number of this size's first message
// (both sides count alike). post_ns (size >= iterations) receives the clock
// before each post. `abort` (may be null) ends a wait (a port went down).
// Ops: Configure, Post, Poll, NowNs (write_sweep.h).
template <typename Ops>
PingPongResult RunPingPong(Ops& ops, const PingPongSide& side, uint32_t size, uint64_t iterations,
                           uint64_t first_message, std::vector<int64_t>& post_ns,
                           int64_t stall_timeout_ns, const std::atomic<bool>* abort) {
  PingPongResult r;
  ops.Configure({side.qp}, size, 1);
  ibv_wc wc;
  auto await = [&](uint64_t message) {
    PingPongOutcome o = AwaitByte(ops, side.poll_byte, PingValue(first_message + message),
                                  stall_timeout_ns, abort);
    if (o == PingPongOutcome::kOk) ++r.received;
    r.outcome = o;
    return o == PingPongOutcome::kOk;
  };
  for (uint64_t i = 0; i < iterations; ++i) {
    if (side.posts_first ? i > 0 && !await(i - 1) : !await(i)) return r;
    *side.post_byte = PingValue(first_message + i);
    post_ns[i] = ops.NowNs();
    if (int rc = ops.Post(0, i, 1, true, EncodeWrId(0, i + 1)); rc != 0) {
      r.outcome = PingPongOutcome::kPostFailed;
      r.error_code = rc;
      return r;
    }
    ++r.posted;
    int n = 0;
    uint64_t spins = 0;
    int64_t since = 0;
    while ((n = ops.Poll(1, &wc)) == 0) {
      if ((++spins & 0xFFF) != 0) continue;
      int64_t now = ops.NowNs();
      if (since == 0) since = now;
      if (now - since > stall_timeout_ns) {
        r.outcome = PingPongOutcome::kStalled;
        return r;
      }
    }
    if (n < 0 || wc.status != IBV_WC_SUCCESS) {
      r.outcome = PingPongOutcome::kCompletionError;
      r.error_code = n < 0 ? -n : wc.status;
      return r;
    }
  }
  if (side.posts_first && iterations > 0 && !await(iterations - 1)) return r;
  r.outcome = PingPongOutcome::kOk;
  return r;
}

}  // namespace gdrbench::agent::bench
