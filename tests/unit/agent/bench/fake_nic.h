// A fake NIC for the data path's Ops policy (write_loop.h, write_sweep.h,
// control.h): a simulated clock, per-QP send queues that complete in order
// after a fixed latency at a fixed wire rate, settable failures, and, when
// regions are registered, memory semantics: every WRITE is checked against
// the local regions (lkey) and the peer's regions (rkey) like a NIC's
// protection check, completes with IBV_WC_REM_ACCESS_ERR / LOC_PROT_ERR when
// it falls outside, and (copy_data) really moves the bytes, so a test can
// check what landed where. Two FakeNics linked with Link() exchange control
// messages (zero-length SEND with immediate) into the peer's posted receives.
//
// It checks the loop's obligations as it goes (never more than tx_depth
// outstanding per QP; the SQ never overflows; no SEND without a receive).
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/bench/verbs_ops.h"

namespace gdrbench::agent::bench::testing {

class FakeNic {
 public:
  FakeNic(uint32_t qps, uint32_t sq_depth, int64_t ns_per_wr, int64_t latency_ns = 1000)
      : sq_depth_(sq_depth), ns_per_wr_(ns_per_wr), latency_ns_(latency_ns), queues_(qps),
        inbox_(qps), receives_(qps, 0) {}

  // Links two NICs both ways: control messages of one land in the other.
  static void Link(FakeNic& a, FakeNic& b) {
    a.peer_ = &b;
    b.peer_ = &a;
  }

  // Memory: regions this side may read (lkey) and regions of the peer this
  // side may write (rkey).
  void AddLocalRegion(const void* addr, uint64_t len, uint32_t lkey) {
    local_.push_back(Region{reinterpret_cast<uint64_t>(addr), len, lkey});
  }
  void AddRemoteRegion(const void* addr, uint64_t len, uint32_t rkey) {
    remote_.push_back(Region{reinterpret_cast<uint64_t>(addr), len, rkey});
  }
  bool copy_data = false;  // perform the writes (needs regions)

  // Failure injection.
  int post_error_at = -1;           // the Nth Post call returns this errno (ENOMEM)
  int64_t complete_error_at = -1;   // the WR with this global number completes with an error
  ibv_wc_status error_status = IBV_WC_REM_ACCESS_ERR;
  bool never_complete = false;      // the peer vanished: nothing completes
  bool qp_error = false;            // the QPs are in the error state: receives flush

  // Observations.
  uint64_t posts = 0;
  uint64_t wrs = 0;
  uint64_t signalled = 0;
  uint64_t max_outstanding = 0;
  uint64_t polls = 0;
  bool sq_overflow = false;
  uint64_t out_of_region = 0;       // WRITEs outside a registered region
  std::string first_violation;
  uint64_t bytes_written = 0;
  uint64_t controls_sent = 0;
  uint64_t sends_without_receive = 0;

  void Configure(const std::vector<QpTarget>& targets, uint32_t bytes, uint32_t post_list) {
    targets_ = targets;
    bytes_ = bytes;
    post_list_ = post_list;
  }

  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    if (post_error_at >= 0 && static_cast<int64_t>(posts) == post_error_at) return 12;  // ENOMEM
    ++posts;
    Queue& q = queues_[qp];
    for (uint32_t i = 0; i < count; ++i) {
      bool last = i + 1 == count;
      ibv_wc_status st = Write(qp);
      // The wire serialises: each WR finishes ns_per_wr after the later of
      // its post and the previous WR's finish.
      wire_free_ = std::max(wire_free_, now_) + ns_per_wr_;
      q.pending.push_back(Wr{wire_free_ + latency_ns_, last && signal, wr_id, wrs, st});
      ++wrs;
    }
    (void)first;
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
        bool injected = complete_error_at >= 0 && static_cast<int64_t>(w.global) >= complete_error_at;
        ibv_wc_status st = injected ? error_status : w.status;
        bool error = st != IBV_WC_SUCCESS;
        if (!w.signalled && !error) {
          q.retired_unsignalled++;
          continue;
        }
        wc[n] = ibv_wc{};
        wc[n].wr_id = w.wr_id;
        wc[n].status = st;
        wc[n].opcode = IBV_WC_RDMA_WRITE;
        ++n;
        // A signalled completion frees its SQ slot and those before it.
        q.unreaped -= std::min(q.unreaped, q.retired_unsignalled + 1);
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
  uint32_t qps() const { return static_cast<uint32_t>(queues_.size()); }
  void Idle() { now_ += 1'000'000; }  // the real one sleeps 1 ms

  // Control messages.
  int PostControl(uint32_t qp, uint32_t imm) {
    ++controls_sent;
    if (peer_ != nullptr && !qp_error) {
      if (peer_->receives_[qp] == 0) {
        ++sends_without_receive;  // a real RC QP would RNR-retry; the protocol must not rely on it
      } else {
        --peer_->receives_[qp];
        peer_->inbox_[qp].push_back(imm);
      }
    }
    Queue& q = queues_[qp];
    q.pending.push_back(Wr{now_ + latency_ns_, true, kControlWrIdBit | qp, wrs++,
                           qp_error ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS});
    q.unreaped += 1;
    return 0;
  }
  int PostControlReceive(uint32_t qp) {
    ++receives_[qp];
    return 0;
  }
  int PollControl(int max, ibv_wc* wc) {
    int n = 0;
    for (uint32_t q = 0; q < inbox_.size() && n < max; ++q) {
      if (qp_error && receives_[q] > 0) {
        --receives_[q];
        wc[n] = ibv_wc{};
        wc[n].wr_id = q;
        wc[n].status = IBV_WC_WR_FLUSH_ERR;
        ++n;
        continue;
      }
      while (n < max && !inbox_[q].empty()) {
        wc[n] = ibv_wc{};
        wc[n].wr_id = q;
        wc[n].status = IBV_WC_SUCCESS;
        wc[n].opcode = IBV_WC_RECV;
        wc[n].imm_data = inbox_[q].front();
        inbox_[q].pop_front();
        ++n;
      }
    }
    now_ += 20;
    return n;
  }
  uint32_t receives_posted(uint32_t qp) const { return receives_[qp]; }

 private:
  struct Region {
    uint64_t addr;
    uint64_t len;
    uint32_t key;
  };
  struct Wr {
    int64_t done_at;
    bool signalled;
    uint64_t wr_id;
    uint64_t global;
    ibv_wc_status status;
  };
  struct Queue {
    std::deque<Wr> pending;
    uint64_t unreaped = 0;
    uint64_t retired_unsignalled = 0;
  };

  static bool Inside(const std::vector<Region>& rs, uint64_t addr, uint64_t len, uint32_t key) {
    for (const Region& r : rs) {
      if (r.key == key && addr >= r.addr && len <= r.len && addr - r.addr <= r.len - len) {
        return true;
      }
    }
    return false;
  }

  // The protection check and the data movement of one WRITE on QP `qp`.
  ibv_wc_status Write(uint32_t qp) {
    if (local_.empty() && remote_.empty()) return IBV_WC_SUCCESS;  // timing-only use
    if (qp >= targets_.size()) return IBV_WC_LOC_QP_OP_ERR;
    const QpTarget& t = targets_[qp];
    if (!Inside(local_, t.local_addr, bytes_, t.lkey)) {
      Violation(absl::StrCat("local [", t.local_addr, ", +", bytes_, ") lkey ", t.lkey));
      return IBV_WC_LOC_PROT_ERR;
    }
    if (!Inside(remote_, t.remote_addr, bytes_, t.rkey)) {
      Violation(absl::StrCat("remote [", t.remote_addr, ", +", bytes_, ") rkey ", t.rkey));
      return IBV_WC_REM_ACCESS_ERR;
    }
    if (copy_data) {
      std::memmove(reinterpret_cast<void*>(t.remote_addr),
                   reinterpret_cast<const void*>(t.local_addr), bytes_);
    }
    bytes_written += bytes_;
    return IBV_WC_SUCCESS;
  }
  void Violation(std::string what) {
    if (out_of_region++ == 0) first_violation = std::move(what);
  }

  uint32_t sq_depth_;
  int64_t ns_per_wr_;
  int64_t latency_ns_;
  std::vector<Queue> queues_;
  std::vector<std::deque<uint32_t>> inbox_;
  std::vector<uint32_t> receives_;
  std::vector<Region> local_;
  std::vector<Region> remote_;
  std::vector<QpTarget> targets_;
  uint32_t bytes_ = 0;
  uint32_t post_list_ = 1;
  FakeNic* peer_ = nullptr;
  int64_t now_ = 1'000'000;
  int64_t wire_free_ = 0;
};

}  // namespace gdrbench::agent::bench::testing
