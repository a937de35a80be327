// RAII handles for verbs and librdmacm objects: each a std::unique_ptr with a
// deleter, made by a factory returning StatusOr. Owners declare members in
// creation order so destruction runs in reverse (QPs before the CQ and PD
// they use, MRs before their PD, cm ids before their event channel).
//
// The ibv_context itself comes from librdmacm (rdma_cm_id::verbs) and is
// owned by it: gdrbench never opens a device context for the data path, so
// there is no context handle here (device_info.cc owns its own for queries).
//
// Verbs error conventions (NULL + errno, returned errno) become absl::Status
// here and only here (VerbsError), with the call and the device in the
// message. Deleters log failures (spdlog) and never throw.
//
// Thread safety: handles are plain owners; use one from one thread at a time.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::agent::verbs {

// The status for a failed verbs/rdma_cm call: `err` is the errno value (the
// returned one for ibv_* calls that return it, errno for NULL/-1 returns).
absl::Status VerbsError(int err, absl::string_view call, absl::string_view device);

struct DeviceListDeleter {
  void operator()(ibv_device** list) const;
};
struct ContextDeleter {
  void operator()(ibv_context* ctx) const;
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const;
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const;
};
struct EventChannelDeleter {
  void operator()(rdma_event_channel* ch) const;
};
// Disconnects (best effort) and destroys the id. Its QP, if any, must have
// been destroyed already (QpPtr).
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const;
};
// Owns only the QP of a cm id (rdma_destroy_qp), not the id.
struct QpDeleter {
  void operator()(rdma_cm_id* id) const;
};
// A QP made with ibv_create_qp (out-of-band mode): ibv_destroy_qp.
struct IbvQpDeleter {
  void operator()(ibv_qp* qp) const;
};

using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDeleter>;
using QpPtr = std::unique_ptr<rdma_cm_id, QpDeleter>;
using IbvQpPtr = std::unique_ptr<ibv_qp, IbvQpDeleter>;

// The device name of a context ("rxe0", "mlx5_0").
std::string DeviceName(const ibv_context* ctx);

// Opens the RDMA device `name` (empty: the first one libibverbs lists).
// FAILED_PRECONDITION "no RDMA device: ..." when libibverbs lists none;
// NOT_FOUND naming the devices present when `name` is not one of them.
absl::StatusOr<ContextPtr> OpenDevice(const std::string& name);
absl::StatusOr<PdPtr> AllocPd(ibv_context* ctx);
absl::StatusOr<CqPtr> CreateCq(ibv_context* ctx, int entries);
// A channel whose fd is non-blocking, for NextCmEvent's timeout.
absl::StatusOr<EventChannelPtr> CreateEventChannel();
absl::StatusOr<CmIdPtr> CreateCmId(rdma_event_channel* channel);

struct QpCaps {
  uint32_t max_send_wr = 128;
  uint32_t max_recv_wr = 1;
  uint32_t max_inline_data = 0;
};
// An RC QP on `id` (rdma_create_qp, which leaves it in INIT), send
// completions on `send_cq`, receive completions on `recv_cq`, no signal-all
// (the bench signals selectively). rdma_cm moves it through RTR/RTS on
// connect/accept.
absl::StatusOr<QpPtr> CreateRcQp(rdma_cm_id* id, ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq,
                                 const QpCaps& caps);
// An RC QP of our own (ibv_create_qp; RESET state), for the out-of-band mode.
absl::StatusOr<IbvQpPtr> CreateRcQp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq,
                                    const QpCaps& caps);
// ibv_modify_qp with the call, the target state and the QPN in the error.
absl::Status ModifyQp(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* state);

}  // namespace gdrbench::agent::verbs
