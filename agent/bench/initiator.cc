#include "agent/bench/initiator.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/bench/control.h"
#include "agent/bench/endpoint_common.h"
#include "agent/bench/side.h"
#include "agent/verbs/device_info.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

absl::StatusOr<uint64_t> CheckRemoteSlices(const std::vector<RemoteSlice>& remote,
                                           const SweepOptions& o) {
  if (remote.size() != o.qps) {
    return absl::InvalidArgumentError(absl::StrCat("the target offers ", remote.size(),
                                                   " buffers for ", o.qps, " QPs"));
  }
  BufferLayout layout = PlanLayout(o);
  const uint64_t stride = remote.empty() ? 0 : remote.front().length;
  for (size_t q = 0; q < remote.size(); ++q) {
    if (remote[q].length != stride) {
      return absl::InvalidArgumentError("the target's per-QP buffers differ in length");
    }
    if (remote[q].length < layout.slice_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the target's buffer for QP ", q, " has ", remote[q].length, " B; this sweep needs ",
          layout.slice_bytes, " B (open the target with the same sizes and verify setting)"));
    }
  }
  return stride;
}

absl::Status Initiator::ResolveRoutes(const InitiatorConfig& c, const std::string& bind,
                                      const sockaddr_storage& src, const sockaddr_storage& dst) {
  const SweepOptions& o = c.options;
  const std::string& device = c.device.name;
  for (uint32_t q = 0; q < o.qps; ++q) {
    GDR_ASSIGN_OR_RETURN(verbs::CmIdPtr id, verbs::CreateCmId(channel_.get()));
    if (o.tclass >= 0) GDR_RETURN_IF_ERROR(verbs::SetTos(id.get(), static_cast<uint8_t>(o.tclass)));
    GDR_RETURN_IF_ERROR(verbs::ResolveRoute(id.get(), channel_.get(), src, dst, c.timeout_ms));
    GDR_RETURN_IF_ERROR(verbs::SetAckTimeout(id.get(), static_cast<uint8_t>(o.qp_timeout)));
    spdlog::debug("initiator {}: QP {} route to {}:{} resolved", device, q, c.target_address,
                  c.target_port);
    std::string dev = verbs::DeviceName(id->verbs);
    if (dev != device) {
      return absl::InvalidArgumentError(absl::StrCat(
          "source address ", bind, " belongs to RDMA device ", dev, ", not ", device));
    }
    if (!ids_.empty() && id->verbs != ids_.front()->verbs) {
      return absl::InternalError("rdma_cm resolved the QPs of one test onto different contexts");
    }
    ids_.push_back(std::move(id));
  }
  return absl::OkStatus();
}

absl::Status Initiator::CreateQps(const SweepOptions& o) {
  std::vector<ibv_qp*> raw;
  for (uint32_t q = 0; q < o.qps; ++q) {
    GDR_ASSIGN_OR_RETURN(verbs::QpPtr qp,
                         verbs::CreateRcQp(ids_[q].get(), pd_.get(), cq_.get(), recv_cq_.get(),
                                           verbs::QpCaps{.max_send_wr = o.tx_depth + kControlSendSlots,
                                                         .max_recv_wr = kControlReceives,
                                                         .max_inline_data = o.inline_size}));
    raw.push_back(qp->qp);
    qps_.push_back(std::move(qp));
  }
  ops_ = std::make_unique<VerbsOps>(cq_.get(), recv_cq_.get(), std::move(raw));
  return ArmControlReceives(*ops_);
}

absl::Status Initiator::ConnectQps(const InitiatorConfig& c) {
  auto* base = static_cast<uint8_t*>(buffer_->data());
  for (uint32_t q = 0; q < c.options.qps; ++q) {
    ConnectData cd{.qp_index = q,
                   .rkey = mr_->rkey,
                   .addr = reinterpret_cast<uint64_t>(base + q * slice_bytes_),
                   .length = slice_bytes_};
    uint8_t wire[ConnectData::kBytes];
    cd.Encode(wire);
    absl::Status st = verbs::Connect(ids_[q].get(), channel_.get(), wire, sizeof(wire), c.timeout_ms);
    spdlog::debug("initiator {}: QP {} connect: {}", c.device.name, q, st.ok() ? "ok" : "failed");
    if (!st.ok()) {
      return absl::Status(st.code(), absl::StrCat("connecting QP ", q, " to ", c.target_address,
                                                  ":", c.target_port, ": ", st.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Initiator>> Initiator::Connect(const FsRoot& fs, const InitiatorConfig& c) {
  const SweepOptions& o = c.options;
  const std::string& device = c.device.name;
  GDR_ASSIGN_OR_RETURN(const uint64_t stride, CheckRemoteSlices(c.remote, o));
  BufferLayout layout = PlanLayout(o);
  std::string bind = c.bind_address;
  if (bind.empty()) {
    GDR_ASSIGN_OR_RETURN(bind, verbs::DeviceIpv4(c.device));
  }
  GDR_ASSIGN_OR_RETURN(sockaddr_storage src, verbs::ParseSockAddr(bind, 0));
  GDR_ASSIGN_OR_RETURN(sockaddr_storage dst, verbs::ParseSockAddr(c.target_address, c.target_port));

  std::unique_ptr<Initiator> in(new Initiator());
  in->slice_bytes_ = stride;
  in->remote_ = c.remote;
  in->seed_ = TestSeed(o.seed, c.remote);
  in->layout_ = layout;
  GDR_ASSIGN_OR_RETURN(in->channel_, verbs::CreateEventChannel());
  GDR_RETURN_IF_ERROR(in->ResolveRoutes(c, bind, src, dst));
  ibv_context* ctx = in->ids_.front()->verbs;
  GDR_ASSIGN_OR_RETURN(in->pd_, verbs::AllocPd(ctx));
  GDR_ASSIGN_OR_RETURN(in->buffer_, memory::Allocate(c.memory, stride * o.qps, c.device.numa_node));
  GDR_ASSIGN_OR_RETURN(memory::Registration reg, memory::Register(in->pd_.get(), *in->buffer_, MrAccess(o)));
  in->mr_ = std::move(reg.mr);
  GDR_RETURN_IF_ERROR(PoisonRegions(*in->buffer_, o.sizes_bytes, layout.reverse_verify_offsets, stride, o.qps,
                                    ReverseSeed(in->seed_)));
  in->registration_ = reg.method;
  GDR_ASSIGN_OR_RETURN(in->cq_, verbs::CreateCq(ctx, CqEntriesFor(o.qps, o.tx_depth, o.cq_moderation)));
  GDR_ASSIGN_OR_RETURN(in->recv_cq_, verbs::CreateCq(ctx, static_cast<int>(o.qps * kControlReceives)));
  GDR_RETURN_IF_ERROR(in->CreateQps(o));
  GDR_RETURN_IF_ERROR(in->ConnectQps(c));
  GDR_ASSIGN_OR_RETURN(in->path_, verbs::QueryPath(fs, in->ids_.front().get()));
  spdlog::info("initiator {}: {} QP(s) to {} established, qpn {}, GID index {} ({}), MTU {}",
               device, o.qps, in->path_.remote_address, in->ids_.front()->qp->qp_num,
               in->path_.gid_index, in->path_.gid_type, in->path_.path_mtu_bytes);
  return in;
}

SweepEndpoint Initiator::endpoint() {
  std::vector<ibv_qp*> qps;
  for (const auto& qp : qps_) qps.push_back(qp->qp);
  return MakeEndpoint(LocalSlices{buffer_.get(), slice_bytes_, mr_->lkey}, qps, remote_,
                      layout_.verify_offsets, seed_);
}

absl::Status Initiator::WaitReverseDone(const std::atomic<bool>& cancelled, int timeout_ms) {
  return WaitControl(*ops_, ControlMessage::kReverseDone, {0}, cancelled,
                     int64_t{timeout_ms} * 1'000'000);
}

std::vector<ReverseCheck> Initiator::CheckReverse(const SweepOptions& o) {
  return CheckRegions(*buffer_, o.sizes_bytes, layout_.reverse_verify_offsets, slice_bytes_,
                      static_cast<uint32_t>(qps_.size()), ReverseSeed(seed_));
}

uint64_t TestSeed(uint64_t seed, const std::vector<RemoteSlice>& target) {
  if (target.empty()) return seed;
  return SizeSeed(seed ^ (uint64_t{target.front().rkey} << 32), target.front().addr);
}

absl::Status PoisonRegions(memory::Buffer& buf, const std::vector<uint64_t>& sizes,
                           const std::vector<uint64_t>& offsets, uint64_t slice_bytes,
                           uint32_t qps, uint64_t seed) {
  const uint64_t poison = ~seed ^ 0x706f69736f6e2121ull;  // "poison!!"
  for (size_t i = 0; i < sizes.size() && i < offsets.size(); ++i) {
    for (uint32_t q = 0; q < qps; ++q) {
      absl::Status st = buf.FillPattern(q * slice_bytes + offsets[i], sizes[i], poison);
      if (!st.ok()) {
        return absl::Status(st.code(), absl::StrCat("poisoning the ", sizes[i],
                                                    " B verify region of QP ", q, ": ",
                                                    st.message()));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<ReverseCheck> CheckRegions(memory::Buffer& buf, const std::vector<uint64_t>& sizes,
                                       const std::vector<uint64_t>& offsets, uint64_t slice_bytes,
                                       uint32_t qps, uint64_t seed) {
  std::vector<ReverseCheck> out;
  for (size_t i = 0; i < sizes.size() && i < offsets.size(); ++i) {
    ReverseCheck c{.size_bytes = sizes[i], .verified = true, .first_bad_offset = 0, .error = ""};
    for (uint32_t q = 0; q < qps && c.verified; ++q) {
      uint64_t region = q * slice_bytes + offsets[i];
      auto bad = buf.CheckPattern(region, sizes[i], SizeSeed(seed, sizes[i]));
      if (!bad.ok()) {
        c.verified = false;
        c.error = std::string(bad.status().message());
      } else if (*bad >= 0) {
        c.verified = false;
        c.first_bad_offset = static_cast<uint64_t>(*bad) - region;
        c.error = absl::StrCat("data mismatch at ", sizes[i], " B, QP ", q, ": first bad byte at ",
                               "offset ", c.first_bad_offset, " of the region the last pass wrote");
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

verbs::DataObjects Initiator::data_objects() const {
  verbs::DataObjects o;
  if (ids_.empty() || ids_[0]->verbs == nullptr) return o;
  o.context = ids_[0]->verbs;
  o.device = verbs::DeviceName(o.context);
  o.send_cq = cq_.get();
  o.recv_cq = recv_cq_.get();
  for (const auto& id : qps_) o.qps.push_back(id->qp);
  return o;
}

}  // namespace gdrbench::agent::bench
