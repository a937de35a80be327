#include "agent/bench/target_endpoint.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/bench/control.h"
#include "agent/bench/endpoint_common.h"
#include "agent/bench/side.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

absl::StatusOr<std::unique_ptr<TargetEndpoint>> TargetEndpoint::Open(const FsRoot& fs,
                                                                     const TargetConfig& c) {
  std::unique_ptr<TargetEndpoint> t(new TargetEndpoint(c));
  t->fs_ = fs;
  const std::string& device = c.device.name;
  std::string bind = c.bind_address;
  if (bind.empty()) {
    GDR_ASSIGN_OR_RETURN(bind, verbs::DeviceIpv4(c.device));
  }
  GDR_ASSIGN_OR_RETURN(sockaddr_storage addr, verbs::ParseSockAddr(bind, 0));
  GDR_ASSIGN_OR_RETURN(t->channel_, verbs::CreateEventChannel());
  GDR_ASSIGN_OR_RETURN(t->listen_id_, verbs::CreateCmId(t->channel_.get()));
  if (rdma_bind_addr(t->listen_id_.get(), reinterpret_cast<sockaddr*>(&addr)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rdma_bind_addr(", bind, ")"));
  }
  ibv_context* ctx = t->listen_id_->verbs;
  std::string dev = verbs::DeviceName(ctx);
  if (ctx == nullptr || dev != device) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind address ", bind, " belongs to ", dev.empty() ? "no RDMA device" : dev, ", not ",
        device));
  }
  if (c.tos >= 0) GDR_RETURN_IF_ERROR(verbs::SetTos(t->listen_id_.get(), static_cast<uint8_t>(c.tos)));
  if (rdma_listen(t->listen_id_.get(), static_cast<int>(c.qps) + 4) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rdma_listen on ", bind));
  }
  t->address_ = bind;
  t->cm_port_ = ntohs(rdma_get_src_port(t->listen_id_.get()));
  GDR_ASSIGN_OR_RETURN(t->pd_, verbs::AllocPd(ctx));
  GDR_ASSIGN_OR_RETURN(t->buffer_, memory::Allocate(c.memory, c.slice_bytes * c.qps, c.device.numa_node));
  GDR_ASSIGN_OR_RETURN(memory::Registration reg, memory::Register(t->pd_.get(), *t->buffer_, c.mr_access));
  t->mr_ = std::move(reg.mr);
  t->registration_ = reg.method;
  GDR_ASSIGN_OR_RETURN(t->cq_, verbs::CreateCq(ctx, CqEntriesFor(c.qps, c.tx_depth, c.cq_moderation)));
  GDR_ASSIGN_OR_RETURN(t->recv_cq_, verbs::CreateCq(ctx, static_cast<int>(c.qps * kControlReceives)));
  t->child_ids_.resize(c.qps);
  t->qps_.resize(c.qps);
  t->peers_.resize(c.qps);
  spdlog::info("target on {} listening at {}:{}, {} x {} B of {} memory ({})", device, bind,
               t->cm_port_, c.qps, c.slice_bytes, t->buffer_->kind_name(), t->registration_);
  return t;
}

std::vector<RemoteSlice> TargetEndpoint::slices() const {
  std::vector<RemoteSlice> out;
  auto* base = static_cast<uint8_t*>(buffer_->data());
  for (uint32_t q = 0; q < config_.qps; ++q) {
    out.push_back(RemoteSlice{reinterpret_cast<uint64_t>(base + q * config_.slice_bytes),
                              mr_->rkey, config_.slice_bytes});
  }
  return out;
}

absl::Status TargetEndpoint::Accept(const std::atomic<bool>& stop, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint32_t requested = 0;
  while (established_ < config_.qps) {
    if (stop.load()) return absl::AbortedError("target closed while waiting for connections");
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no initiator connected ", config_.qps, " QP(s) within ", timeout_ms, " ms (",
          established_, " established)"));
    }
    auto ev = verbs::NextCmEvent(channel_.get(), 200);
    if (!ev.ok()) {
      if (absl::IsDeadlineExceeded(ev.status())) continue;
      return ev.status();
    }
    switch (ev->type) {
      case RDMA_CM_EVENT_CONNECT_REQUEST: GDR_RETURN_IF_ERROR(OnConnectRequest(*ev, requested)); break;
      case RDMA_CM_EVENT_ESTABLISHED:
        ++established_;
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        break;
      default:
        return absl::UnavailableError(absl::StrCat("rdma_cm event ", rdma_event_str(ev->type),
                                                   " (status ", ev->status,
                                                   ") while accepting connections"));
    }
  }
  return FinishAccept();
}

absl::Status TargetEndpoint::OnConnectRequest(const verbs::CmEvent& ev, uint32_t& requested) {
  verbs::CmIdPtr child(ev.id);
  auto cd = ConnectData::Decode(ev.private_data.data(), ev.private_data_len);
  if (!cd.ok() || cd->qp_index >= config_.qps || child_ids_[cd->qp_index] != nullptr ||
      requested >= config_.qps) {
    spdlog::warn("target {}:{}: rejecting a connection request ({})", address_, cm_port_,
                 cd.ok() ? std::string("QP slot taken or out of range") : std::string(cd.status().message()));
    rdma_reject(child.get(), nullptr, 0);
    return absl::OkStatus();
  }
  GDR_RETURN_IF_ERROR(verbs::SetAckTimeout(child.get(), static_cast<uint8_t>(config_.qp_timeout)));
  GDR_ASSIGN_OR_RETURN(verbs::QpPtr qp,
                       verbs::CreateRcQp(child.get(), pd_.get(), cq_.get(), recv_cq_.get(),
                                         verbs::QpCaps{.max_send_wr = config_.tx_depth + kControlSendSlots,
                                                       .max_recv_wr = kControlReceives,
                                                       .max_inline_data = config_.inline_size}));
  // Receives for the control messages before the QP can get any.
  for (uint32_t i = 0; i < kControlReceives; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = cd->qp_index;
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(qp->qp, &wr, &bad); rc != 0) {
      return ErrnoToStatus(rc, absl::StrCat("ibv_post_recv (control) for QP ", cd->qp_index));
    }
  }
  if (requested == 0 && config_.before_first_accept) config_.before_first_accept();
  rdma_conn_param param{};
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.rnr_retry_count = 7;
  if (rdma_accept(child.get(), &param) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rdma_accept for QP ", cd->qp_index));
  }
  peers_[cd->qp_index] = RemoteSlice{cd->addr, cd->rkey, cd->length};
  qps_[cd->qp_index] = std::move(qp);
  child_ids_[cd->qp_index] = std::move(child);
  ++requested;
  return absl::OkStatus();
}

absl::Status TargetEndpoint::FinishAccept() {
  for (auto& id : child_ids_) {
    if (id != nullptr) {
      GDR_ASSIGN_OR_RETURN(path_, verbs::QueryPath(fs_, id.get()));
      break;
    }
  }
  std::vector<ibv_qp*> raw;
  for (auto& qp : qps_) raw.push_back(qp->qp);
  ops_ = std::make_unique<VerbsOps>(cq_.get(), recv_cq_.get(), std::move(raw));
  spdlog::info("target {}:{}: {} QP(s) established from {}, qpn {}, GID index {} ({}), MTU {}",
               address_, cm_port_, established_, path_.remote_address,
               qps_.front() ? qps_.front()->qp->qp_num : 0, path_.gid_index, path_.gid_type,
               path_.path_mtu_bytes);
  return absl::OkStatus();
}

verbs::DataObjects TargetEndpoint::data_objects() const {
  verbs::DataObjects o;
  if (listen_id_ == nullptr || listen_id_->verbs == nullptr) return o;
  o.context = listen_id_->verbs;
  o.device = verbs::DeviceName(o.context);
  o.send_cq = cq_.get();
  o.recv_cq = recv_cq_.get();
  for (const auto& qp : qps_) {
    if (qp) o.qps.push_back(qp->qp);
  }
  return o;
}

SweepEndpoint TargetEndpoint::ReverseEndpoint(const BufferLayout& layout, uint64_t seed) {
  std::vector<ibv_qp*> qps;
  for (const auto& qp : qps_) qps.push_back(qp ? qp->qp : nullptr);
  return MakeEndpoint(LocalSlices{buffer_.get(), config_.slice_bytes, mr_->lkey}, qps, peers_,
                      layout.reverse_verify_offsets, ReverseSeed(seed));
}

}  // namespace gdrbench::agent::bench
