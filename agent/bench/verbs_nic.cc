#include "agent/bench/verbs_nic.h"

#include <net/if.h>

#include <array>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/verbs/neighbour.h"
#include "agent/bench/control.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

absl::StatusOr<std::unique_ptr<VerbsNic>> VerbsNic::Open(const std::string& device, uint8_t port) {
  std::unique_ptr<VerbsNic> n(new VerbsNic());
  n->port_ = port;
  GDR_ASSIGN_OR_RETURN(n->ctx_, verbs::OpenDevice(device));
  ibv_port_attr pa{};
  if (int rc = ibv_query_port(n->ctx_.get(), port, &pa); rc != 0) {
    return verbs::VerbsError(rc, absl::StrCat("ibv_query_port(", int{port}, ")"), device);
  }
  n->lid_ = pa.lid;
  GDR_ASSIGN_OR_RETURN(n->pd_, verbs::AllocPd(n->ctx_.get()));
  return n;
}

absl::StatusOr<MemoryKeys> VerbsNic::Register(memory::Buffer& buffer, int access) {
  GDR_ASSIGN_OR_RETURN(memory::Registration reg, memory::Register(pd_.get(), buffer, access));
  MemoryKeys k{.lkey = reg.mr->lkey, .rkey = reg.mr->rkey, .method = reg.method};
  mrs_.push_back(std::move(reg.mr));
  return k;
}

absl::Status VerbsNic::CreateQps(uint32_t qps, const verbs::QpCaps& caps, int send_cq_entries) {
  GDR_ASSIGN_OR_RETURN(cq_, verbs::CreateCq(ctx_.get(), send_cq_entries));
  GDR_ASSIGN_OR_RETURN(recv_cq_, verbs::CreateCq(ctx_.get(), static_cast<int>(qps * kControlReceives)));
  std::vector<ibv_qp*> raw;
  max_inline_ = caps.max_inline_data;
  for (uint32_t q = 0; q < qps; ++q) {
    GDR_ASSIGN_OR_RETURN(verbs::IbvQpPtr qp, verbs::CreateRcQp(pd_.get(), cq_.get(), recv_cq_.get(), caps));
    QpTransition init = InitAttributes(port_);
    GDR_RETURN_IF_ERROR(verbs::ModifyQp(qp.get(), init.attr, init.mask, "INIT"));
    addresses_.push_back(QpAddress{.qpn = qp->qp_num, .psn = RandomPsn(), .lid = lid_});
    raw.push_back(qp.get());
    qps_.push_back(std::move(qp));
  }
  ops_ = std::make_unique<VerbsOps>(cq_.get(), recv_cq_.get(), std::move(raw));
  return ArmControlReceives(*ops_);
}

verbs::DataObjects VerbsNic::data_objects() const {
  verbs::DataObjects o;
  o.context = ctx_.get();
  o.device = verbs::DeviceName(o.context);
  o.send_cq = cq_.get();
  o.recv_cq = recv_cq_.get();
  for (const auto& qp : qps_) o.qps.push_back(qp.get());
  return o;
}

void VerbsNic::WarmNeighbour(const ibv_ah_attr& ah) {
  if (!ah.is_global || warmed_) return;
  warmed_ = true;
  ibv_gid_entry entry{};
  if (int rc = ibv_query_gid_ex(ctx_.get(), port_, ah.grh.sgid_index, &entry, 0); rc != 0) {
    spdlog::warn("neighbour warm-up skipped: ibv_query_gid_ex(port {}, index {}): {}", int{port_},
                 int{ah.grh.sgid_index}, std::strerror(rc));
    return;
  }
  char ifname[IF_NAMESIZE] = {};
  if (entry.gid_type == IBV_GID_TYPE_IB || entry.ndev_ifindex == 0 ||
      if_indextoname(entry.ndev_ifindex, ifname) == nullptr) {
    return;  // InfiniBand, or a GID without a netdev: no neighbour to resolve
  }
  std::array<uint8_t, 16> local{}, remote{};
  std::memcpy(local.data(), entry.gid.raw, 16);
  std::memcpy(remote.data(), ah.grh.dgid.raw, 16);
  auto w = verbs::WarmNeighbour(FsRoot("/"), ifname, local, remote, kNeighbourBudgetMs);
  if (!w.ok()) {
    spdlog::warn("neighbour warm-up on {} failed (the QP goes on without it): {}", ifname,
                 std::string(w.status().message()));
  } else if (w->needed) {
    spdlog::info("{}", w->detail);
  }
}

absl::Status VerbsNic::Connect(uint32_t q, const QpTransition& rtr, const QpTransition& rts) {
  QpTransition a = rtr, b = rts;
  WarmNeighbour(rtr.attr.ah_attr);
  GDR_RETURN_IF_ERROR(verbs::ModifyQp(qps_[q].get(), a.attr, a.mask, "RTR"));
  GDR_RETURN_IF_ERROR(verbs::ModifyQp(qps_[q].get(), b.attr, b.mask, "RTS"));
  spdlog::debug("QP {} (qpn {}) -> RTS: dest qpn {}, sgid index {}, MTU {}", q, qps_[q]->qp_num,
                rtr.attr.dest_qp_num, int{rtr.attr.ah_attr.grh.sgid_index},
                128u << rtr.attr.path_mtu);
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::bench
