// The out-of-band connection mode's sessions (session.h), over any Nic
// policy (VerbsNic in verbs_nic.h; the fake NIC of the unit tests):
//   target:    buffer, registration, QPs in INIT with their QPN/PSN, the
//              port's LID, MTU and GIDs published (opened().oob); Connect()
//              brings the QPs to RTR/RTS with the initiator's addresses and
//              the GID index the initiator chose for this end, then sends
//              kReady on every QP (held: SendReady() does, later).
//   initiator: buffer sliced with the target's stride, QPs created and, with
//              the target's addresses and the chosen GIDs (ChooseGids),
//              brought to RTR/RTS at once; connect_info() is its half for the
//              target; WaitReady() waits for the target's kReady.
// Thread safety: as session.h.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "agent/bench/control.h"
#include "agent/bench/endpoint_common.h"
#include "agent/bench/session.h"
#include "agent/bench/side.h"
#include "agent/bench/verbs_nic.h"
#include "common/status.h"

namespace gdrbench::agent::bench {

// The port of `device` the session uses (the first one; port 1 on the NICs
// gdrbench drives) and its exchange view.
inline const verbs::PortInfo* FirstPort(const verbs::DeviceInfo& device) {
  return device.ports.empty() ? nullptr : &device.ports.front();
}

inline OobEndpoint PublishEndpoint(const verbs::PortInfo& port, std::vector<QpAddress> qps) {
  return OobEndpoint{.qps = std::move(qps),
                     .port = static_cast<uint8_t>(port.port_num == 0 ? 1 : port.port_num),
                     .lid = static_cast<uint16_t>(port.lid),
                     .mtu_bytes = port.active_mtu_bytes,
                     .roce = port.link_layer == "Ethernet",
                     .gids = GidCandidates(port)};
}

inline verbs::PathInfo OobPath(const verbs::DeviceInfo& device, const verbs::PortInfo& port,
                               const GidChoice& gids, uint32_t mtu, const std::string& remote) {
  verbs::PathInfo p;
  p.device = device.name;
  p.port = port.port_num;
  p.gid_index = gids.global ? static_cast<int>(gids.local_index) : -1;
  for (const verbs::GidEntry& g : port.gids) {
    if (g.index == gids.local_index) {
      p.gid = g.gid;
      p.gid_type = g.type;
    }
  }
  p.path_mtu_bytes = mtu;
  p.remote_address = remote;
  return p;
}

template <typename Nic>
class OobTarget final : public TargetSession {
 public:
  static absl::StatusOr<std::unique_ptr<OobTarget>> Open(std::unique_ptr<Nic> nic,
                                                         const TargetSpec& spec) {
    const verbs::PortInfo* port = FirstPort(spec.device);
    if (port == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("RDMA device ", spec.device.name,
                                                        " has no port"));
    }
    std::unique_ptr<OobTarget> t(new OobTarget(spec, *port));
    const SweepOptions& o = spec.options;
    GDR_ASSIGN_OR_RETURN(t->buffer_,
                         memory::Allocate(spec.memory, spec.slice_bytes * o.qps, spec.device.numa_node));
    t->nic_ = std::move(nic);
    GDR_ASSIGN_OR_RETURN(MemoryKeys keys, t->nic_->Register(*t->buffer_, MrAccess(o)));
    t->lkey_ = keys.lkey;
    GDR_RETURN_IF_ERROR(PoisonRegions(*t->buffer_, o.sizes_bytes, t->layout_.verify_offsets, spec.slice_bytes,
                                      o.qps, o.seed));
    GDR_RETURN_IF_ERROR(t->nic_->CreateQps(o.qps,
                                           verbs::QpCaps{.max_send_wr = o.tx_depth + kControlSendSlots,
                                                         .max_recv_wr = kControlReceives,
                                                         .max_inline_data = o.inline_size},
                                           CqEntriesFor(o.qps, o.tx_depth, o.cq_moderation)));
    TargetOpened& op = t->opened_;
    op.cm = CmMode::kOob;
    std::vector<QpAddress> addrs;
    for (uint32_t q = 0; q < o.qps; ++q) {
      addrs.push_back(t->nic_->Address(q));
      op.slices.push_back(RemoteSlice{
          reinterpret_cast<uint64_t>(static_cast<uint8_t*>(t->buffer_->data()) + q * spec.slice_bytes),
          keys.rkey, spec.slice_bytes});
    }
    op.oob = PublishEndpoint(*port, std::move(addrs));
    op.memory_kind = t->buffer_->kind_name();
    op.registration = keys.method;
    return t;
  }

  const TargetOpened& opened() const override { return opened_; }
  memory::Buffer& buffer() override { return *buffer_; }
  uint64_t slice_bytes() const override { return spec_.slice_bytes; }
  const verbs::PathInfo& path() const override { return path_; }

  absl::Status Connect(const OobPeer& peer) override {
    std::lock_guard lock(mu_);
    if (connected_) return absl::FailedPreconditionError("the target is already connected");
    const SweepOptions& o = spec_.options;
    if (peer.endpoint.qps.size() != o.qps || peer.slices.size() != o.qps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the initiator offers ", peer.endpoint.qps.size(), " QPs and ", peer.slices.size(),
          " buffers for a ", o.qps, "-QP target"));
    }
    bool has_gid = false;
    for (const GidCandidate& g : opened_.oob.gids) has_gid = has_gid || g.index == peer.target_gid_index;
    if (peer.global && !has_gid) {
      return absl::InvalidArgumentError(absl::StrCat("GID index ", peer.target_gid_index,
                                                     " is not populated on ", spec_.device.name));
    }
    PathParams path{.port = opened_.oob.port,
                    .local_mtu_bytes = opened_.oob.mtu_bytes,
                    .remote_mtu_bytes = peer.endpoint.mtu_bytes,
                    .qp_timeout = static_cast<uint8_t>(o.qp_timeout),
                    .sl = o.sl,
                    .traffic_class = static_cast<uint8_t>(o.tclass < 0 ? 0 : o.tclass),
                    .gids = GidChoice{.local_index = peer.target_gid_index,
                                      .remote_index = 0,
                                      .remote_gid = peer.initiator_gid,
                                      .global = peer.global,
                                      .reason = ""}};
    for (uint32_t q = 0; q < o.qps; ++q) {
      GDR_RETURN_IF_ERROR(
          nic_->Connect(q, RtrAttributes(peer.endpoint.qps[q], path), RtsAttributes(nic_->Address(q), path)));
    }
    // Held: SendReady, once the controller starts the test.
    if (!spec_.hold_ready) GDR_RETURN_IF_ERROR(SendReadyLocked());
    peer_slices_ = peer.slices;
    path_ = OobPath(spec_.device, port_, path.gids,
                    std::min(path.local_mtu_bytes, path.remote_mtu_bytes), GidText(peer.initiator_gid));
    connected_ = true;
    cv_.notify_all();
    return absl::OkStatus();
  }

  absl::Status SendReady() override {
    std::lock_guard lock(mu_);
    if (!connected_) return absl::FailedPreconditionError("SendReady before the initiator connected");
    return SendReadyLocked();
  }

  absl::Status Accept(const std::atomic<bool>& stop, int timeout_ms) override {
    std::unique_lock lock(mu_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!connected_) {
      if (stop.load()) return absl::AbortedError("target closed while waiting for ConnectTarget");
      if (cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                      std::chrono::milliseconds(100))) ==
              std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "no initiator connected (ConnectTarget) within ", timeout_ms, " ms"));
      }
    }
    return absl::OkStatus();
  }

  void Run(const std::atomic<bool>& stop,
           const std::function<void(const SizeOutcome&)>& on_size) override {
    std::vector<ibv_qp*> qps;
    for (uint32_t q = 0; q < spec_.options.qps; ++q) qps.push_back(nic_->qp(q));
    SweepEndpoint reverse = MakeEndpoint(LocalSlices{buffer_.get(), spec_.slice_bytes, lkey_}, qps,
                                         peer_slices_, layout_.reverse_verify_offsets,
                                         ReverseSeed(TestSeed(spec_.options.seed, opened_.slices)));
    SweepIdentity id{spec_.device.name, path_.gid_index, ""};
    RunTargetPart(nic_->ops(), spec_.options, layout_, reverse, id, stop, nullptr, on_size);
  }
  verbs::DataObjects data_objects() const override { return nic_->data_objects(); }

 private:
  OobTarget(const TargetSpec& spec, const verbs::PortInfo& port)
      : spec_(spec), port_(port), layout_(PlanLayout(spec.options)) {}

  absl::Status SendReadyLocked() { return SendReadyOnQps(nic_->ops(), spec_.options.qps); }

  const TargetSpec spec_;
  const verbs::PortInfo port_;
  const BufferLayout layout_;
  // The buffer outlives the NIC (its MR is deregistered first).
  std::unique_ptr<memory::Buffer> buffer_;
  std::unique_ptr<Nic> nic_;
  uint32_t lkey_ = 0;
  TargetOpened opened_;
  verbs::PathInfo path_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool connected_ = false;                 // guarded by mu_
  std::vector<RemoteSlice> peer_slices_;   // set once connected
};

template <typename Nic>
class OobInitiator final : public InitiatorSession {
 public:
  static absl::StatusOr<std::unique_ptr<OobInitiator>> Open(std::unique_ptr<Nic> nic,
                                                            const InitiatorSpec& spec) {
    const verbs::PortInfo* port = FirstPort(spec.device);
    if (port == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("RDMA device ", spec.device.name,
                                                        " has no port"));
    }
    const SweepOptions& o = spec.options;
    GDR_ASSIGN_OR_RETURN(uint64_t stride, CheckRemoteSlices(spec.remote, o));
    if (spec.target.qps.size() != o.qps) {
      return absl::InvalidArgumentError(absl::StrCat("the target offers ", spec.target.qps.size(),
                                                     " QP addresses for ", o.qps, " QPs"));
    }
    std::unique_ptr<OobInitiator> in(new OobInitiator(spec, *port, stride));
    OobEndpoint local_view = PublishEndpoint(*port, {});
    GDR_ASSIGN_OR_RETURN(GidChoice gids,
                         ChooseGids(local_view.gids, spec.target.gids, local_view.roce,
                                    o.gid_index >= 0 ? std::optional<uint32_t>(o.gid_index) : std::nullopt));
    GDR_ASSIGN_OR_RETURN(in->buffer_, memory::Allocate(spec.memory, stride * o.qps, spec.device.numa_node));
    in->nic_ = std::move(nic);
    GDR_ASSIGN_OR_RETURN(MemoryKeys keys, in->nic_->Register(*in->buffer_, MrAccess(o)));
    in->keys_ = keys;
    GDR_RETURN_IF_ERROR(PoisonRegions(*in->buffer_, o.sizes_bytes, in->layout_.reverse_verify_offsets, stride,
                                      o.qps, o.seed));
    GDR_RETURN_IF_ERROR(in->nic_->CreateQps(o.qps,
                                            verbs::QpCaps{.max_send_wr = o.tx_depth + kControlSendSlots,
                                                          .max_recv_wr = kControlReceives,
                                                          .max_inline_data = o.inline_size},
                                            CqEntriesFor(o.qps, o.tx_depth, o.cq_moderation)));
    PathParams path{.port = local_view.port,
                    .local_mtu_bytes = local_view.mtu_bytes,
                    .remote_mtu_bytes = spec.target.mtu_bytes,
                    .qp_timeout = static_cast<uint8_t>(o.qp_timeout),
                    .sl = o.sl,
                    .traffic_class = static_cast<uint8_t>(o.tclass < 0 ? 0 : o.tclass),
                    .gids = gids};
    OobPeer& me = in->me_;
    for (uint32_t q = 0; q < o.qps; ++q) {
      GDR_RETURN_IF_ERROR(in->nic_->Connect(q, RtrAttributes(spec.target.qps[q], path),
                                            RtsAttributes(in->nic_->Address(q), path)));
      me.endpoint.qps.push_back(in->nic_->Address(q));
      me.slices.push_back(RemoteSlice{
          reinterpret_cast<uint64_t>(static_cast<uint8_t*>(in->buffer_->data()) + q * stride),
          keys.rkey, stride});
    }
    me.endpoint.port = local_view.port;
    me.endpoint.lid = local_view.lid;
    me.endpoint.mtu_bytes = local_view.mtu_bytes;
    me.endpoint.roce = local_view.roce;
    me.endpoint.gids = local_view.gids;
    me.target_gid_index = gids.remote_index;
    me.global = gids.global;
    for (const GidCandidate& g : local_view.gids) {
      if (g.index == gids.local_index) me.initiator_gid = g.gid;
    }
    in->path_ = OobPath(spec.device, *port, gids, std::min(path.local_mtu_bytes, path.remote_mtu_bytes),
                        GidText(gids.remote_gid));
    in->path_.local_address = GidText(me.initiator_gid);
    in->gid_reason_ = gids.reason;
    return in;
  }

  const verbs::PathInfo& path() const override { return path_; }
  std::string memory_kind() const override { return buffer_->kind_name(); }
  std::string registration() const override { return keys_.method; }
  std::optional<OobPeer> connect_info() const override { return me_; }
  std::string gid_choice() const override { return gid_reason_; }

  absl::Status WaitReady(const std::atomic<bool>& cancelled, int timeout_ms) override {
    return WaitReadyOnQps(nic_->ops(), spec_.options.qps, cancelled, int64_t{timeout_ms} * 1'000'000,
                          &mailbox_);
  }

  size_t RunSweep(const SweepIdentity& id, const std::atomic<bool>& cancelled,
                  const std::function<void(const SizeOutcome&)>& on_size) override {
    return bench::RunSweep(nic_->ops(), spec_.options, Forward(), id, cancelled, on_size);
  }

  size_t RunLatency(const SweepIdentity& id, const std::atomic<bool>& cancelled,
                    const std::function<void(const SizeOutcome&)>& on_size) override {
    return RunLatencySweep(nic_->ops(), spec_.options, MakeLatencyEndpoint(Forward(), layout_, true),
                           id, cancelled, nullptr, on_size);
  }

  absl::Status WaitReverseDone(const std::atomic<bool>& cancelled, int timeout_ms) override {
    return WaitControl(nic_->ops(), ControlMessage::kReverseDone, {0}, cancelled,
                       int64_t{timeout_ms} * 1'000'000, &mailbox_);
  }

  std::vector<ReverseCheck> CheckReverse() override {
    const SweepOptions& o = spec_.options;
    return CheckRegions(*buffer_, o.sizes_bytes, layout_.reverse_verify_offsets, stride_, o.qps,
                        ReverseSeed(TestSeed(o.seed, spec_.remote)));
  }
  verbs::DataObjects data_objects() const override { return nic_->data_objects(); }

 private:
  OobInitiator(const InitiatorSpec& spec, const verbs::PortInfo& port, uint64_t stride)
      : spec_(spec), port_(port), stride_(stride), layout_(PlanLayout(spec.options)) {}

  SweepEndpoint Forward() {
    std::vector<ibv_qp*> qps;
    for (uint32_t q = 0; q < spec_.options.qps; ++q) qps.push_back(nic_->qp(q));
    return MakeEndpoint(LocalSlices{buffer_.get(), stride_, keys_.lkey}, qps, spec_.remote,
                        layout_.verify_offsets, TestSeed(spec_.options.seed, spec_.remote));
  }

  const InitiatorSpec spec_;
  const verbs::PortInfo port_;
  const uint64_t stride_;
  const BufferLayout layout_;
  std::unique_ptr<memory::Buffer> buffer_;
  std::unique_ptr<Nic> nic_;
  MemoryKeys keys_;
  OobPeer me_;
  verbs::PathInfo path_;
  std::string gid_reason_;
  ControlMailbox mailbox_;  // "reverse sweep done" seen while waiting for "ready"
};

}  // namespace gdrbench::agent::bench
