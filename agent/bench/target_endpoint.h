// The passive side of a test: an rdma_cm listener bound to the NIC's own
// address (port chosen by the kernel), the target buffer (NUMA-local to the
// NIC, registered for remote write), one CQ, and the accepted QPs.
//
// Open() returns once the buffer is registered and the listener is up, so
// the caller can hand out the address, port and per-QP slices; Accept()
// then waits for the initiator's connections (run it on a thread of its
// own; it returns when `qps` are established, on error, or when `stop`).
//
// Errors: as Initiator, plus ABORTED when stopped while accepting.
// Thread safety: Open/Accept/accessors from one thread at a time; the
// buffer may be checked (VerifyPattern) once Accept has returned.
#pragma once

#include <functional>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/initiator.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "agent/verbs/cm.h"
#include "agent/verbs/data_events.h"
#include "agent/verbs/device_info.h"
#include "agent/verbs/handles.h"
#include "common/fs_root.h"

namespace gdrbench::agent::bench {

struct TargetConfig {
  verbs::DeviceInfo device;  // resolved once per test
  std::string bind_address;  // empty: the device's first IPv4 address
  memory::MemorySpec memory;
  uint64_t slice_bytes = 0;  // per QP
  uint32_t qps = 1;
  // Send side, for a bidirectional test (the target writes back).
  uint32_t tx_depth = kDefaultTxDepth;
  uint32_t cq_moderation = kDefaultCqModeration;
  uint32_t qp_timeout = kDefaultQpTimeout;
  uint32_t inline_size = 0;
  int mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;  // MrAccess
  int tos = -1;  // RDMA_OPTION_ID_TOS of the listener; -1: unset
  // Called once by Accept before its first rdma_accept (may be empty).
  std::function<void()> before_first_accept;
};

class TargetEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<TargetEndpoint>> Open(const FsRoot& fs,
                                                              const TargetConfig& config);

  const std::string& address() const { return address_; }
  uint16_t cm_port() const { return cm_port_; }
  std::vector<RemoteSlice> slices() const;
  std::string memory_kind() const { return buffer_->kind_name(); }
  const std::string& registration() const { return registration_; }
  memory::Buffer& buffer() { return *buffer_; }
  uint64_t slice_bytes() const { return config_.slice_bytes; }

  // Accepts `qps` connections from one initiator (each QP in the slot its
  // connect data names). DEADLINE_EXCEEDED after `timeout_ms` overall.
  absl::Status Accept(const std::atomic<bool>& stop, int timeout_ms);
  bool connected() const { return established_ == config_.qps; }

  // After Accept: the reverse direction (target -> initiator) for a
  // bidirectional test; the initiator's slices come from its connect data,
  // the verify regions are the layout's reverse ones, filled with
  // ReverseSeed(seed).
  SweepEndpoint ReverseEndpoint(const BufferLayout& layout, uint64_t seed);
  // The Ops of the accepted QPs (valid after Accept): the reverse sweep and
  // the control messages go through it.
  VerbsOps& ops() { return *ops_; }
  const verbs::PathInfo& path() const { return path_; }
  // Its CQs and QPs on librdmacm's context of the device (data_events.h).
  verbs::DataObjects data_objects() const;

 private:
  explicit TargetEndpoint(TargetConfig config) : config_(std::move(config)) {}
  // Accept's steps: one connection request (a QP made and accepted, or the
  // request rejected), and the path and data-path ops once all are up.
  absl::Status OnConnectRequest(const verbs::CmEvent& ev, uint32_t& requested);
  absl::Status FinishAccept();

  TargetConfig config_;
  // Members in creation order; destroyed in reverse.
  verbs::EventChannelPtr channel_;
  verbs::CmIdPtr listen_id_;
  verbs::PdPtr pd_;
  std::unique_ptr<memory::Buffer> buffer_;
  memory::MrPtr mr_;
  verbs::CqPtr cq_;
  verbs::CqPtr recv_cq_;
  std::vector<verbs::CmIdPtr> child_ids_;  // by QP index
  std::vector<verbs::QpPtr> qps_;          // by QP index
  std::unique_ptr<VerbsOps> ops_;

  std::vector<RemoteSlice> peers_;        // the initiator's slices, by QP index
  uint32_t established_ = 0;
  std::string address_;
  uint16_t cm_port_ = 0;
  std::string registration_;
  verbs::PathInfo path_;
  FsRoot fs_{"/"};
};

}  // namespace gdrbench::agent::bench
