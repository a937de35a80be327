#include "agent/bench/initiator.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/bench/endpoint_common.h"
#include "agent/verbs/device_info.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

int DeviceNumaNode(const FsRoot& fs, const std::string& device) {
  std::string reason;
  auto devs = verbs::ListDevices(fs, {device}, &reason);
  if (!devs.ok() || devs->empty()) return -1;
  return devs->front().numa_node;
}

absl::StatusOr<std::unique_ptr<Initiator>> Initiator::Connect(const FsRoot& fs,
                                                              const InitiatorConfig& c) {
  const SweepOptions& o = c.options;
  if (c.remote.size() != o.qps) {
    return absl::InvalidArgumentError(absl::StrCat("the target offers ", c.remote.size(),
                                                   " buffers for ", o.qps, " QPs"));
  }
  BufferLayout layout = PlanLayout(o.sizes_bytes, o.verify, o.bidirectional);
  // The local buffer is sliced with the target's stride, so that a verify
  // region sits at the same buffer offset on both sides (the pattern is a
  // function of the offset).
  const uint64_t stride = c.remote.empty() ? 0 : c.remote.front().length;
  for (size_t q = 0; q < c.remote.size(); ++q) {
    if (c.remote[q].length != stride) {
      return absl::InvalidArgumentError("the target's per-QP buffers differ in length");
    }
    if (c.remote[q].length < layout.slice_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the target's buffer for QP ", q, " has ", c.remote[q].length, " B; this sweep needs ",
          layout.slice_bytes, " B (open the target with the same sizes and verify setting)"));
    }
  }
  std::string bind = c.bind_address;
  if (bind.empty()) {
    ASSIGN_OR_RETURN(bind, verbs::DeviceIpv4(fs, c.device));
  }
  ASSIGN_OR_RETURN(sockaddr_storage src, verbs::ParseSockAddr(bind, 0));
  ASSIGN_OR_RETURN(sockaddr_storage dst, verbs::ParseSockAddr(c.target_address, c.target_port));

  std::unique_ptr<Initiator> in(new Initiator());
  in->slice_bytes_ = stride;
  in->remote_ = c.remote;
  in->seed_ = o.seed;
  ASSIGN_OR_RETURN(in->channel_, verbs::CreateEventChannel());
  for (uint32_t q = 0; q < o.qps; ++q) {
    ASSIGN_OR_RETURN(verbs::CmIdPtr id, verbs::CreateCmId(in->channel_.get()));
    RETURN_IF_ERROR(verbs::ResolveRoute(id.get(), in->channel_.get(), src, dst, c.timeout_ms));
    RETURN_IF_ERROR(verbs::SetAckTimeout(id.get(), verbs::kAckTimeout));
    spdlog::debug("initiator {}: QP {} route to {}:{} resolved", c.device, q, c.target_address,
                  c.target_port);
    std::string dev = verbs::DeviceName(id->verbs);
    if (dev != c.device) {
      return absl::InvalidArgumentError(absl::StrCat(
          "source address ", bind, " belongs to RDMA device ", dev, ", not ", c.device));
    }
    if (!in->ids_.empty() && id->verbs != in->ids_.front()->verbs) {
      return absl::InternalError("rdma_cm resolved the QPs of one test onto different contexts");
    }
    in->ids_.push_back(std::move(id));
  }
  ibv_context* ctx = in->ids_.front()->verbs;
  ASSIGN_OR_RETURN(in->pd_, verbs::AllocPd(ctx));
  ASSIGN_OR_RETURN(in->buffer_, memory::Allocate(c.memory, stride * o.qps,
                                                 DeviceNumaNode(fs, c.device)));
  ASSIGN_OR_RETURN(memory::Registration reg,
                   memory::Register(in->pd_.get(), *in->buffer_,
                                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  in->mr_ = std::move(reg.mr);
  in->registration_ = reg.method;
  ASSIGN_OR_RETURN(in->cq_,
                   verbs::CreateCq(ctx, CqEntriesFor(o.qps, o.tx_depth, o.cq_moderation)));
  for (uint32_t q = 0; q < o.qps; ++q) {
    ASSIGN_OR_RETURN(verbs::QpPtr qp,
                     verbs::CreateRcQp(in->ids_[q].get(), in->pd_.get(), in->cq_.get(),
                                       verbs::QpCaps{.max_send_wr = o.tx_depth}));
    in->qps_.push_back(std::move(qp));
  }
  auto* base = static_cast<uint8_t*>(in->buffer_->data());
  for (uint32_t q = 0; q < o.qps; ++q) {
    ConnectData cd{.qp_index = q,
                   .rkey = in->mr_->rkey,
                   .addr = reinterpret_cast<uint64_t>(base + q * stride),
                   .length = stride};
    uint8_t wire[ConnectData::kBytes];
    cd.Encode(wire);
    absl::Status st = verbs::Connect(in->ids_[q].get(), in->channel_.get(), wire, sizeof(wire),
                               c.timeout_ms);
    spdlog::debug("initiator {}: QP {} connect: {}", c.device, q, st.ok() ? "ok" : "failed");
    if (!st.ok()) {
      return absl::Status(st.code(), absl::StrCat("connecting QP ", q, " to ", c.target_address,
                                                  ":", c.target_port, ": ", st.message()));
    }
  }
  ASSIGN_OR_RETURN(in->path_, verbs::QueryPath(fs, in->ids_.front().get()));
  spdlog::info("initiator {}: {} QP(s) to {} established, qpn {}, GID index {} ({}), MTU {}",
               c.device, o.qps, in->path_.remote_address, in->ids_.front()->qp->qp_num,
               in->path_.gid_index, in->path_.gid_type, in->path_.path_mtu_bytes);
  return in;
}

SweepEndpoint Initiator::endpoint() {
  SweepEndpoint ep;
  ep.cq = cq_.get();
  ep.slice_bytes = slice_bytes_;
  auto* base = static_cast<uint8_t*>(buffer_->data());
  for (size_t q = 0; q < qps_.size(); ++q) {
    ep.slices.push_back(QpTarget{.qp = qps_[q]->qp,
                                 .local_addr = reinterpret_cast<uint64_t>(base + q * slice_bytes_),
                                 .lkey = mr_->lkey,
                                 .remote_addr = remote_[q].addr,
                                 .rkey = remote_[q].rkey});
  }
  ep.fill_pattern = [this](uint64_t off, uint64_t len, std::string* err) {
    absl::Status st = buffer_->FillPattern(off, len, seed_);
    if (!st.ok()) *err = std::string(st.message());
    return st.ok();
  };
  return ep;
}

absl::Status Initiator::WaitPeerDisconnect(const std::atomic<bool>& cancelled, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t disconnected = 0;
  while (disconnected < ids_.size()) {
    if (cancelled.load()) return absl::AbortedError("cancelled while waiting for the target");
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the target did not finish its reverse sweep within ", timeout_ms, " ms"));
    }
    auto ev = verbs::NextCmEvent(channel_.get(), 200);
    if (!ev.ok()) {
      if (absl::IsDeadlineExceeded(ev.status())) continue;
      return ev.status();
    }
    if (ev->type == RDMA_CM_EVENT_DISCONNECTED) ++disconnected;
  }
  return absl::OkStatus();
}

absl::Status Initiator::SignalForwardDone(const SweepOptions& o) {
  BufferLayout layout = PlanLayout(o.sizes_bytes, o.verify, o.bidirectional);
  RETURN_IF_ERROR(
      buffer_->FillPattern(layout.done_marker_offset, kDoneMarkerBytes, DoneMarkerSeed(o.seed)));
  SweepEndpoint ep = endpoint();
  QpTarget t = ep.slices.front();
  t.local_addr += layout.done_marker_offset;
  t.remote_addr += layout.done_marker_offset;
  VerbsOps ops(cq_.get(), 1);
  ops.Configure({t}, static_cast<uint32_t>(kDoneMarkerBytes));
  LoopParams p{.qps = 1, .tx_depth = 1, .cq_moderation = 1, .post_list = 1, .iterations = 1};
  LoopScratch scratch;
  scratch.Prepare(p);
  LoopResult r = RunWriteLoop(ops, p, scratch);
  if (r.outcome != LoopOutcome::kOk) {
    return absl::UnavailableError(
        absl::StrCat("writing the done marker: ", DescribeFailure(r, kDoneMarkerBytes)));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::bench
