// The real Ops policy of RunWriteLoop (write_loop.h): prebuilt RDMA WRITE
// work requests per QP (post_list of them, chained), one shared send CQ.
// Configure() fills them for one message size outside the loop; Post() only
// sets the last WR's flags and wr_id and calls ibv_post_send.
// Thread safety: owned by the one thread that runs the loop.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace gdrbench::agent::bench {

struct QpTarget {
  ibv_qp* qp = nullptr;
  uint64_t local_addr = 0;   // source of the writes
  uint32_t lkey = 0;
  uint64_t remote_addr = 0;  // destination
  uint32_t rkey = 0;
};

class VerbsOps {
 public:
  VerbsOps(ibv_cq* cq, uint32_t post_list) : cq_(cq), post_list_(post_list) {}

  // (Re)builds the WR chains: every WR of QP q writes `bytes` from
  // targets[q].local_addr to targets[q].remote_addr.
  void Configure(const std::vector<QpTarget>& targets, uint32_t bytes) {
    qps_.clear();
    wrs_.assign(targets.size() * post_list_, ibv_send_wr{});
    sges_.assign(targets.size() * post_list_, ibv_sge{});
    for (size_t q = 0; q < targets.size(); ++q) {
      qps_.push_back(targets[q].qp);
      for (uint32_t i = 0; i < post_list_; ++i) {
        size_t k = q * post_list_ + i;
        sges_[k] = ibv_sge{targets[q].local_addr, bytes, targets[q].lkey};
        ibv_send_wr& wr = wrs_[k];
        wr.sg_list = &sges_[k];
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = 0;
        wr.wr.rdma.remote_addr = targets[q].remote_addr;
        wr.wr.rdma.rkey = targets[q].rkey;
        wr.next = i + 1 < post_list_ ? &wrs_[k + 1] : nullptr;
      }
    }
  }

  int Post(uint32_t qp, uint64_t /*first*/, uint32_t count, bool signal, uint64_t wr_id) {
    ibv_send_wr* head = &wrs_[qp * post_list_];
    ibv_send_wr& last = head[count - 1];
    last.send_flags = signal ? IBV_SEND_SIGNALED : 0;
    last.wr_id = wr_id;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qps_[qp], head, &bad);
  }

  int Poll(int max, ibv_wc* wc) { return ibv_poll_cq(cq_, max, wc); }

  int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  ibv_cq* cq_;
  uint32_t post_list_;
  std::vector<ibv_qp*> qps_;
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
};

}  // namespace gdrbench::agent::bench
