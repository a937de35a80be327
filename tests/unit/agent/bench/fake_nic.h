// A fake NIC for RunWriteLoop: a simulated clock, per-QP send queues that
// complete in order after a fixed latency at a fixed wire rate, and settable
// failures. It checks the loop's obligations as it goes (never more than
// tx_depth outstanding per QP; the SQ never overflows).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <vector>

namespace gdrbench::agent::bench::testing {

class FakeNic {
 public:
  FakeNic(uint32_t qps, uint32_t sq_depth, int64_t ns_per_wr, int64_t latency_ns = 1000)
      : sq_depth_(sq_depth), ns_per_wr_(ns_per_wr), latency_ns_(latency_ns), queues_(qps) {}

  // Failure injection.
  int post_error_at = -1;           // the Nth Post call returns this errno (ENOMEM)
  int64_t complete_error_at = -1;   // the WR with this global number completes with an error
  ibv_wc_status error_status = IBV_WC_REM_ACCESS_ERR;
  bool never_complete = false;      // the peer vanished: nothing completes

  // Observations.
  uint64_t posts = 0;
  uint64_t wrs = 0;
  uint64_t signalled = 0;
  uint64_t max_outstanding = 0;
  uint64_t polls = 0;
  bool sq_overflow = false;

  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    if (post_error_at >= 0 && static_cast<int64_t>(posts) == post_error_at) return 12;  // ENOMEM
    ++posts;
    Queue& q = queues_[qp];
    for (uint32_t i = 0; i < count; ++i) {
      bool last = i + 1 == count;
      // The wire serialises: each WR finishes ns_per_wr after the later of
      // its post and the previous WR's finish.
      wire_free_ = std::max(wire_free_, now_) + ns_per_wr_;
      q.pending.push_back(Wr{wire_free_ + latency_ns_, last && signal, wr_id, wrs});
      ++wrs;
    }
    if (signal) ++signalled;
    q.unreaped += count;
    if (q.unreaped > sq_depth_) sq_overflow = true;
    max_outstanding = std::max<uint64_t>(max_outstanding, q.unreaped);
    now_ += 50;  // a post costs a little time
    return 0;
  }

  int Poll(int max, ibv_wc* wc) {
    ++polls;
    now_ += 20;
    int n = 0;
    if (never_complete) return 0;
    for (Queue& q : queues_) {
      while (n < max && !q.pending.empty() && q.pending.front().done_at <= now_) {
        Wr w = q.pending.front();
        q.pending.pop_front();
        bool error = complete_error_at >= 0 && static_cast<int64_t>(w.global) >= complete_error_at;
        if (!w.signalled && !error) {
          q.retired_unsignalled++;
          continue;
        }
        wc[n] = ibv_wc{};
        wc[n].wr_id = w.wr_id;
        wc[n].status = error ? error_status : IBV_WC_SUCCESS;
        wc[n].opcode = IBV_WC_RDMA_WRITE;
        ++n;
        // A signalled completion frees its SQ slot and those before it.
        q.unreaped -= q.retired_unsignalled + 1;
        q.retired_unsignalled = 0;
        if (error) return n;
      }
    }
    if (n == 0) {
      // Nothing due: jump the clock to the next event, as time passes.
      int64_t next = INT64_MAX;
      for (Queue& q : queues_) {
        if (!q.pending.empty()) next = std::min(next, q.pending.front().done_at);
      }
      if (next != INT64_MAX && next > now_) now_ = next;
    }
    return n;
  }

  int64_t NowNs() { return now_; }
  int64_t now() const { return now_; }

 private:
  struct Wr {
    int64_t done_at;
    bool signalled;
    uint64_t wr_id;
    uint64_t global;
  };
  struct Queue {
    std::deque<Wr> pending;
    uint64_t unreaped = 0;
    uint64_t retired_unsignalled = 0;
  };
  uint32_t sq_depth_;
  int64_t ns_per_wr_;
  int64_t latency_ns_;
  std::vector<Queue> queues_;
  int64_t now_ = 1'000'000;
  int64_t wire_free_ = 0;
};

}  // namespace gdrbench::agent::bench::testing
