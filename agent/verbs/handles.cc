#include "agent/verbs/handles.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::verbs {

absl::Status VerbsError(int err, absl::string_view call, absl::string_view device) {
  return ErrnoToStatus(err, device.empty() ? std::string(call) : absl::StrCat(call, " on ", device));
}

void PdDeleter::operator()(ibv_pd* pd) const {
  if (int rc = ibv_dealloc_pd(pd); rc != 0) spdlog::warn("ibv_dealloc_pd failed: errno {}", rc);
}

void CqDeleter::operator()(ibv_cq* cq) const {
  if (int rc = ibv_destroy_cq(cq); rc != 0) spdlog::warn("ibv_destroy_cq failed: errno {}", rc);
}

void EventChannelDeleter::operator()(rdma_event_channel* ch) const {
  rdma_destroy_event_channel(ch);
}

void CmIdDeleter::operator()(rdma_cm_id* id) const {
  (void)rdma_disconnect(id);  // fails harmlessly when never connected
  if (rdma_destroy_id(id) != 0) spdlog::warn("rdma_destroy_id failed: errno {}", errno);
}

void QpDeleter::operator()(rdma_cm_id* id) const { rdma_destroy_qp(id); }

void IbvQpDeleter::operator()(ibv_qp* qp) const {
  if (int rc = ibv_destroy_qp(qp); rc != 0) spdlog::warn("ibv_destroy_qp failed: errno {}", rc);
}

std::string DeviceName(const ibv_context* ctx) {
  if (ctx == nullptr || ctx->device == nullptr) return "";
  const char* n = ibv_get_device_name(ctx->device);
  return n ? n : "";
}

void DeviceListDeleter::operator()(ibv_device** list) const { ibv_free_device_list(list); }

void ContextDeleter::operator()(ibv_context* ctx) const {
  std::string name = DeviceName(ctx);
  if (int rc = ibv_close_device(ctx); rc != 0) {
    spdlog::warn("ibv_close_device({}) failed: {}", name, std::strerror(errno));
  }
}

absl::StatusOr<ContextPtr> OpenDevice(const std::string& name) {
  int count = 0;
  DeviceListPtr list(ibv_get_device_list(&count));
  if (list == nullptr || count == 0) {
    const int err = list == nullptr ? errno : 0;
    return absl::FailedPreconditionError(absl::StrCat(
        "no RDMA device: libibverbs lists none",
        err != 0 ? absl::StrCat(" (ibv_get_device_list: ", std::strerror(err), ")") : ""));
  }
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back(ibv_get_device_name(list.get()[i]));
    if (name.empty() || names.back() == name) {
      ibv_context* ctx = ibv_open_device(list.get()[i]);
      if (ctx == nullptr) return VerbsError(errno, "ibv_open_device", names.back());
      return ContextPtr(ctx);
    }
  }
  return absl::NotFoundError(absl::StrCat("no RDMA device \"", name, "\"; this node has ",
                                          absl::StrJoin(names, ", ")));
}

absl::StatusOr<PdPtr> AllocPd(ibv_context* ctx) {
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (pd == nullptr) return VerbsError(errno, "ibv_alloc_pd", DeviceName(ctx));
  return PdPtr(pd);
}

absl::StatusOr<CqPtr> CreateCq(ibv_context* ctx, int entries) {
  ibv_cq* cq = ibv_create_cq(ctx, entries, nullptr, nullptr, 0);
  if (cq == nullptr) {
    return VerbsError(errno, absl::StrCat("ibv_create_cq(", entries, " entries)"),
                      DeviceName(ctx));
  }
  return CqPtr(cq);
}

absl::StatusOr<EventChannelPtr> CreateEventChannel() {
  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr) return VerbsError(errno, "rdma_create_event_channel", "");
  EventChannelPtr out(ch);
  int flags = fcntl(ch->fd, F_GETFL);
  if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return VerbsError(errno, "fcntl(O_NONBLOCK) on the rdma_cm event channel", "");
  }
  return out;
}

absl::StatusOr<CmIdPtr> CreateCmId(rdma_event_channel* channel) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) {
    return VerbsError(errno, "rdma_create_id", "");
  }
  return CmIdPtr(id);
}

namespace {

// The RC QP both connection modes create: one SGE per work request, every
// send unsignalled unless asked (CQ moderation).
ibv_qp_init_attr RcQpAttr(ibv_cq* send_cq, ibv_cq* recv_cq, const QpCaps& caps) {
  ibv_qp_init_attr attr{};
  attr.send_cq = send_cq;
  attr.recv_cq = recv_cq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = caps.max_send_wr;
  attr.cap.max_recv_wr = caps.max_recv_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;  // control receives carry no SGE; 0 is not portable
  attr.cap.max_inline_data = caps.max_inline_data;
  return attr;
}

}  // namespace

absl::StatusOr<QpPtr> CreateRcQp(rdma_cm_id* id, ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq,
                                 const QpCaps& caps) {
  ibv_qp_init_attr attr = RcQpAttr(send_cq, recv_cq, caps);
  if (rdma_create_qp(id, pd, &attr) != 0) {
    return VerbsError(errno,
                      absl::StrCat("rdma_create_qp(RC, ", caps.max_send_wr, " send WRs)"),
                      DeviceName(id->verbs));
  }
  return QpPtr(id);
}

}  // namespace gdrbench::agent::verbs

namespace gdrbench::agent::verbs {

absl::StatusOr<IbvQpPtr> CreateRcQp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq,
                                    const QpCaps& caps) {
  ibv_qp_init_attr attr = RcQpAttr(send_cq, recv_cq, caps);
  ibv_qp* qp = ibv_create_qp(pd, &attr);
  if (qp == nullptr) {
    return VerbsError(errno, absl::StrCat("ibv_create_qp(RC, ", caps.max_send_wr, " send WRs)"),
                      DeviceName(pd->context));
  }
  return IbvQpPtr(qp);
}

absl::Status ModifyQp(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* state) {
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) {
    return VerbsError(rc, absl::StrCat("ibv_modify_qp(QP ", qp->qp_num, " -> ", state, ")"),
                      DeviceName(qp->context));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::verbs
