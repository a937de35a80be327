// The real SessionFactory: rdma_cm sessions over Initiator/TargetEndpoint
// (librdmacm), out-of-band sessions over VerbsNic (libibverbs).
#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/bench/oob_session.h"
#include "agent/bench/session.h"
#include "agent/bench/side.h"
#include "agent/bench/target_endpoint.h"
#include "agent/bench/verbs_nic.h"
#include "common/status.h"

namespace gdrbench::agent::bench {

const char* CmModeName(CmMode m) {
  switch (m) {
    case CmMode::kAuto: return "auto";
    case CmMode::kRdmaCm: return "rdma_cm";
    case CmMode::kOob: return "oob";
  }
  return "?";
}

CmMode ResolveCmMode(CmMode asked, const verbs::PortInfo& port) {
  if (asked != CmMode::kAuto) return asked;
  for (const std::string& ip : port.ip_addresses) {
    if (ip.find('.') != std::string::npos) return CmMode::kRdmaCm;
  }
  return CmMode::kOob;
}

absl::Status CheckServiceLevel(CmMode cm, const SweepOptions& o) {
  if (cm == CmMode::kRdmaCm && o.sl != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "service level ", int{o.sl}, " with rdma_cm: rdma_cm takes the service level from the "
        "path (InfiniBand) or from the traffic class (RoCE); give the traffic class instead, "
        "or connect out of band to set the service level"));
  }
  return absl::OkStatus();
}

namespace {

class CmTarget final : public TargetSession {
 public:
  CmTarget(std::unique_ptr<TargetEndpoint> ep, const TargetSpec& spec)
      : ep_(std::move(ep)), spec_(spec), layout_(PlanLayout(spec.options)) {
    opened_.cm = CmMode::kRdmaCm;
    opened_.address = ep_->address();
    opened_.cm_port = ep_->cm_port();
    opened_.slices = ep_->slices();
    opened_.memory_kind = ep_->memory_kind();
    opened_.registration = ep_->registration();
  }
  const TargetOpened& opened() const override { return opened_; }
  absl::Status Accept(const std::atomic<bool>& stop, int timeout_ms) override {
    return ep_->Accept(stop, timeout_ms);
  }
  absl::Status Connect(const OobPeer&) override {
    return absl::FailedPreconditionError(
        "this target connects through rdma_cm (ConnectTarget is for the out-of-band mode)");
  }
  absl::Status SendReady() override { return SendReadyOnQps(ep_->ops(), spec_.options.qps); }
  void Run(const std::atomic<bool>& stop,
           const std::function<void(const SizeOutcome&)>& on_size) override {
    SweepIdentity id{ep_->path().device, ep_->path().gid_index, ""};
    RunTargetPart(ep_->ops(), spec_.options, layout_,
                  ep_->ReverseEndpoint(layout_, TestSeed(spec_.options.seed, opened_.slices)), id,
                  stop, nullptr, on_size);
  }
  memory::Buffer& buffer() override { return ep_->buffer(); }
  uint64_t slice_bytes() const override { return ep_->slice_bytes(); }
  const verbs::PathInfo& path() const override { return ep_->path(); }
  verbs::DataObjects data_objects() const override { return ep_->data_objects(); }

 private:
  std::unique_ptr<TargetEndpoint> ep_;
  const TargetSpec spec_;
  const BufferLayout layout_;
  TargetOpened opened_;
};

class CmInitiator final : public InitiatorSession {
 public:
  CmInitiator(std::unique_ptr<Initiator> in, const InitiatorSpec& spec)
      : in_(std::move(in)), spec_(spec), layout_(PlanLayout(spec.options)) {}
  const verbs::PathInfo& path() const override { return in_->path(); }
  std::string memory_kind() const override { return in_->memory_kind(); }
  std::string registration() const override { return in_->registration(); }
  std::optional<OobPeer> connect_info() const override { return std::nullopt; }
  // A held target sends kReady when the controller starts the test; else
  // ESTABLISHED was the go.
  absl::Status WaitReady(const std::atomic<bool>& cancelled, int timeout_ms) override {
    if (!spec_.wait_for_start) return absl::OkStatus();
    return WaitReadyOnQps(in_->ops(), spec_.options.qps, cancelled, int64_t{timeout_ms} * 1'000'000);
  }
  size_t RunSweep(const SweepIdentity& id, const std::atomic<bool>& cancelled,
                  const std::function<void(const SizeOutcome&)>& on_size) override {
    return bench::RunSweep(in_->ops(), spec_.options, in_->endpoint(), id, cancelled, on_size);
  }
  size_t RunLatency(const SweepIdentity& id, const std::atomic<bool>& cancelled,
                    const std::function<void(const SizeOutcome&)>& on_size) override {
    return RunLatencySweep(in_->ops(), spec_.options,
                           MakeLatencyEndpoint(in_->endpoint(), layout_, true), id, cancelled,
                           nullptr, on_size);
  }
  absl::Status WaitReverseDone(const std::atomic<bool>& cancelled, int timeout_ms) override {
    return in_->WaitReverseDone(cancelled, timeout_ms);
  }
  std::vector<ReverseCheck> CheckReverse() override { return in_->CheckReverse(spec_.options); }
  verbs::DataObjects data_objects() const override { return in_->data_objects(); }

 private:
  std::unique_ptr<Initiator> in_;
  const InitiatorSpec spec_;
  const BufferLayout layout_;
};

class VerbsSessionFactory final : public SessionFactory {
 public:
  explicit VerbsSessionFactory(FsRoot fs) : fs_(std::move(fs)) {}

  std::unique_ptr<verbs::PortWatch> WatchPort(const std::string& device, uint32_t port,
                                              const std::atomic<bool>& cancelled) override {
    return port_events_.Watch(device, port, cancelled);
  }
  std::unique_ptr<verbs::DataWatch> WatchData(const verbs::DataObjects& objects,
                                              const std::atomic<bool>& cancelled) override {
    return data_events_.Watch(objects, cancelled);
  }

  absl::StatusOr<verbs::DeviceInfo> ResolveDevice(const std::string& name) override {
    std::string reason;
    GDR_ASSIGN_OR_RETURN(auto devs, verbs::ListDevices(fs_, {name}, &reason));
    if (devs.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("RDMA device '", name, "' is absent: ", reason));
    }
    return devs.front();
  }

  absl::StatusOr<std::unique_ptr<TargetSession>> OpenTarget(const TargetSpec& spec) override {
    const verbs::PortInfo* port = FirstPort(spec.device);
    if (port == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("RDMA device ", spec.device.name,
                                                        " has no port"));
    }
    const CmMode cm = ResolveCmMode(spec.cm, *port);
    GDR_RETURN_IF_ERROR(CheckServiceLevel(cm, spec.options));
    if (cm == CmMode::kOob) {
      GDR_ASSIGN_OR_RETURN(std::unique_ptr<VerbsNic> nic,
                           VerbsNic::Open(spec.device.name, static_cast<uint8_t>(port->port_num)));
      GDR_ASSIGN_OR_RETURN(auto t, OobTarget<VerbsNic>::Open(std::move(nic), spec));
      return std::unique_ptr<TargetSession>(std::move(t));
    }
    const SweepOptions& o = spec.options;
    TargetConfig tc{.device = spec.device,
                    .bind_address = spec.bind_address,
                    .memory = spec.memory,
                    .slice_bytes = spec.slice_bytes,
                    .qps = o.qps,
                    .tx_depth = o.tx_depth,
                    .cq_moderation = o.cq_moderation,
                    .qp_timeout = o.qp_timeout,
                    .inline_size = o.inline_size,
                    .mr_access = MrAccess(o),
                    .tos = o.tclass,
                    .before_first_accept = spec.before_first_accept};
    GDR_ASSIGN_OR_RETURN(std::unique_ptr<TargetEndpoint> ep, TargetEndpoint::Open(fs_, tc));
    GDR_RETURN_IF_ERROR(PoisonRegions(ep->buffer(), o.sizes_bytes, PlanLayout(o).verify_offsets,
                                      ep->slice_bytes(), o.qps, o.seed));
    return std::unique_ptr<TargetSession>(std::make_unique<CmTarget>(std::move(ep), spec));
  }

  absl::StatusOr<std::unique_ptr<InitiatorSession>> OpenInitiator(
      const InitiatorSpec& spec) override {
    if (spec.cm == CmMode::kOob) {
      const verbs::PortInfo* port = FirstPort(spec.device);
      if (port == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat("RDMA device ", spec.device.name,
                                                          " has no port"));
      }
      GDR_ASSIGN_OR_RETURN(std::unique_ptr<VerbsNic> nic,
                           VerbsNic::Open(spec.device.name, static_cast<uint8_t>(port->port_num)));
      GDR_ASSIGN_OR_RETURN(auto in, OobInitiator<VerbsNic>::Open(std::move(nic), spec));
      return std::unique_ptr<InitiatorSession>(std::move(in));
    }
    GDR_RETURN_IF_ERROR(CheckServiceLevel(spec.cm, spec.options));
    InitiatorConfig ic{.device = spec.device,
                       .bind_address = spec.bind_address,
                       .target_address = spec.target_address,
                       .target_port = spec.target_port,
                       .memory = spec.memory,
                       .options = spec.options,
                       .remote = spec.remote,
                       .timeout_ms = spec.timeout_ms};
    GDR_ASSIGN_OR_RETURN(std::unique_ptr<Initiator> in, Initiator::Connect(fs_, ic));
    return std::unique_ptr<InitiatorSession>(std::make_unique<CmInitiator>(std::move(in), spec));
  }

 private:
  const FsRoot fs_;
  verbs::PortEvents port_events_;  // one thread per device tested on
  verbs::DataEvents data_events_;  // one thread: the tests' own CQ and QP errors
};

}  // namespace

std::unique_ptr<SessionFactory> MakeVerbsSessionFactory(const FsRoot& fs) {
  return std::make_unique<VerbsSessionFactory>(fs);
}

}  // namespace gdrbench::agent::bench
