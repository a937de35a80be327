// The real Ops policy of RunWriteLoop (write_loop.h), RunSweep
// (write_sweep.h) and the control messages (control.h): prebuilt RDMA WRITE
// work requests per QP (post_list of them, chained), one shared send CQ, and
// a receive CQ of its own for control messages. Configure() fills the WRs for
// one message size outside the loop; Post() only sets the last WR's flags and
// wr_id and calls ibv_post_send.
// Thread safety: owned by the one thread that runs the loop.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace gdrbench::agent::bench {

struct QpTarget {
  ibv_qp* qp = nullptr;
  uint64_t local_addr = 0;   // source of the writes
  uint32_t lkey = 0;
  uint64_t remote_addr = 0;  // destination
  uint32_t rkey = 0;
};

// The wr_id of a control SEND's completion on the send CQ (bit 47 set, so no
// write-loop wr_id, whose done count stays far below 2^47, looks like one).
inline constexpr uint64_t kControlWrIdBit = uint64_t{1} << 47;
// The wr_id of a keep-alive probe (control.h PeerProbe): bits 47 and 46, | qp.
inline constexpr uint64_t kKeepaliveWrId = kControlWrIdBit | (uint64_t{1} << 46);
// Send queue slots a QP keeps beyond tx_depth: a control SEND and keep-alives
// may be outstanding when a write loop starts.
inline constexpr uint32_t kControlSendSlots = 4;

class VerbsOps {
 public:
  // `recv_cq` may be null when the QPs carry no control messages.
  VerbsOps(ibv_cq* send_cq, ibv_cq* recv_cq, std::vector<ibv_qp*> qps)
      : cq_(send_cq), recv_cq_(recv_cq), qps_(std::move(qps)) {}

  // (Re)builds the WR chains: every WR of QP q writes `bytes` from
  // targets[q].local_addr to targets[q].remote_addr. targets[q].qp must be
  // the q-th QP this object was made with.
  void Configure(const std::vector<QpTarget>& targets, uint32_t bytes, uint32_t post_list) {
    post_list_ = post_list;
    loop_qps_.clear();
    wrs_.assign(targets.size() * post_list_, ibv_send_wr{});
    sges_.assign(targets.size() * post_list_, ibv_sge{});
    for (size_t q = 0; q < targets.size(); ++q) {
      loop_qps_.push_back(targets[q].qp);
      for (uint32_t i = 0; i < post_list_; ++i) {
        size_t k = q * post_list_ + i;
        sges_[k] = ibv_sge{targets[q].local_addr, bytes, targets[q].lkey};
        ibv_send_wr& wr = wrs_[k];
        wr.sg_list = &sges_[k];
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = inline_flag_;
        wr.wr.rdma.remote_addr = targets[q].remote_addr;
        wr.wr.rdma.rkey = targets[q].rkey;
        wr.next = i + 1 < post_list_ ? &wrs_[k + 1] : nullptr;
      }
    }
  }

  int Post(uint32_t qp, uint64_t /*first*/, uint32_t count, bool signal, uint64_t wr_id) {
    ibv_send_wr* head = &wrs_[qp * post_list_];
    ibv_send_wr& last = head[count - 1];
    last.send_flags = (signal ? IBV_SEND_SIGNALED : 0) | inline_flag_;
    last.wr_id = wr_id;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(loop_qps_[qp], head, &bad);
  }

  int Poll(int max, ibv_wc* wc) { return ibv_poll_cq(cq_, max, wc); }

  // Later Configure()d WRs carry their payload inline (write_lat's small
  // messages; the QPs must have been created with enough max_inline_data).
  void SetInline(bool on) { inline_flag_ = on ? IBV_SEND_INLINE : 0; }

  int64_t NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Control messages (control.h): a signalled zero-length SEND with
  // immediate data on QP `qp`; its completion comes through Poll() with
  // wr_id kControlWrIdBit | qp.
  int PostControl(uint32_t qp, uint32_t imm) {
    ibv_send_wr wr{};
    wr.wr_id = kControlWrIdBit | qp;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.num_sge = 0;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qps_[qp], &wr, &bad);
  }
  // A keep-alive probe: a signalled zero-length RDMA WRITE to the start of
  // QP `qp`'s remote slice (valid address and rkey, so even a responder that
  // checks the R_Key of a zero-length WRITE admits it). -1 before the first
  // Configure().
  int PostKeepalive(uint32_t qp) {
    if (wrs_.empty() || qp >= loop_qps_.size()) return -1;
    ibv_send_wr wr{};
    wr.wr_id = kKeepaliveWrId | qp;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.num_sge = 0;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = wrs_[qp * post_list_].wr.rdma.remote_addr;
    wr.wr.rdma.rkey = wrs_[qp * post_list_].wr.rdma.rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(loop_qps_[qp], &wr, &bad);
  }
  // A zero-length receive on QP `qp` for the next control message (wr_id = qp).
  int PostControlReceive(uint32_t qp) {
    ibv_recv_wr wr{};
    wr.wr_id = qp;
    wr.num_sge = 0;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qps_[qp], &wr, &bad);
  }
  // The receive CQ; imm_data in host order.
  int PollControl(int max, ibv_wc* wc) {
    if (recv_cq_ == nullptr) return 0;
    int n = ibv_poll_cq(recv_cq_, max, wc);
    for (int i = 0; i < n; ++i) wc[i].imm_data = ntohl(wc[i].imm_data);
    return n;
  }
  uint32_t qps() const { return static_cast<uint32_t>(qps_.size()); }
  void Idle() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

 private:
  ibv_cq* cq_;
  ibv_cq* recv_cq_;
  std::vector<ibv_qp*> qps_;
  uint32_t post_list_ = 1;
  unsigned inline_flag_ = 0;
  std::vector<ibv_qp*> loop_qps_;
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
};

}  // namespace gdrbench::agent::bench
