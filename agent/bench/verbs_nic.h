// The real Nic policy of the out-of-band sessions (oob_session.h): a device
// context of its own (ibv_open_device), a PD, the send CQ and the control
// receive CQ, and RC QPs made with ibv_create_qp and moved RESET -> INIT (at
// creation, with the control receives posted) -> RTR -> RTS (Connect).
// The fake NIC of the unit tests (tests/unit/agent/bench/fake_nic.h)
// implements the same members:
//   static StatusOr<unique_ptr<Nic>> (made by the session factory)
//   StatusOr<MemoryKeys> Register(memory::Buffer& buffer, int access);  // MrAccess
//   Status CreateQps(uint32_t qps, const verbs::QpCaps& caps, int send_cq_entries);
//   QpAddress Address(uint32_t q) const;       // qpn, psn, lid
//   Status Connect(uint32_t q, const QpTransition& rtr, const QpTransition& rts);
//   ibv_qp* qp(uint32_t q) const;              // for QpTarget (the fake: null)
//   Ops& ops();                                 // VerbsOps here
//   uint32_t max_inline() const;                // what the QPs were granted
// Errors: as verbs (handles.h), naming the call, the device and the QP.
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/oob.h"
#include "agent/bench/verbs_ops.h"
#include "agent/memory/memory.h"
#include "agent/verbs/data_events.h"
#include "agent/verbs/device_info.h"
#include "agent/verbs/handles.h"

namespace gdrbench::agent::bench {

struct MemoryKeys {
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  std::string method;  // "ibv_reg_mr", "ibv_reg_dmabuf_mr", ...
};

class VerbsNic {
 public:
  static absl::StatusOr<std::unique_ptr<VerbsNic>> Open(const std::string& device, uint8_t port);

  absl::StatusOr<MemoryKeys> Register(memory::Buffer& buffer, int access);
  absl::Status CreateQps(uint32_t qps, const verbs::QpCaps& caps, int send_cq_entries);
  QpAddress Address(uint32_t q) const { return addresses_[q]; }
  // RTR then RTS. Before the first RTR with a GRH, the kernel's neighbour
  // entry of the peer's GID is resolved (verbs::WarmNeighbour, at most
  // kNeighbourBudgetMs; a failure is logged, not returned): an out-of-band
  // QP's first packets would otherwise wait for the resolution's
  // retransmission on a first contact.
  absl::Status Connect(uint32_t q, const QpTransition& rtr, const QpTransition& rts);
  ibv_qp* qp(uint32_t q) const { return qps_[q].get(); }
  VerbsOps& ops() { return *ops_; }
  uint32_t max_inline() const { return max_inline_; }
  ibv_context* context() const { return ctx_.get(); }
  // Its CQs and QPs on its own context (data_events.h).
  verbs::DataObjects data_objects() const;

 private:
  VerbsNic() = default;
  void WarmNeighbour(const ibv_ah_attr& ah);

  static constexpr int kNeighbourBudgetMs = 1000;
  bool warmed_ = false;  // once per NIC: every QP of a test has the same peer

  uint8_t port_ = 1;
  uint16_t lid_ = 0;
  uint32_t max_inline_ = 0;
  // Members in creation order; destroyed in reverse.
  verbs::ContextPtr ctx_;
  verbs::PdPtr pd_;
  std::vector<memory::MrPtr> mrs_;
  verbs::CqPtr cq_;
  verbs::CqPtr recv_cq_;
  std::vector<verbs::IbvQpPtr> qps_;
  std::vector<QpAddress> addresses_;
  std::unique_ptr<VerbsOps> ops_;
};

}  // namespace gdrbench::agent::bench
