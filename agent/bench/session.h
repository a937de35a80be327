// One test as the agent's service drives it, independent of how the QPs get
// connected (rdma_cm, or out of band: QPN/PSN/LID/GID exchanged through the
// controller's gRPC and the QPs brought to RTR/RTS with ibv_modify_qp) and of
// the hardware (real verbs, or the fake NIC of the unit tests).
//
//   target:    SessionFactory::OpenTarget -> opened() (what OpenTarget
//              returns) -> Accept() on the target's worker thread (rdma_cm:
//              the initiator's connections; out of band: until Connect() has
//              run) -> Run() (the reverse sweep of a bidirectional test, or
//              the latency responder) -> buffer() for VerifyTarget. A
//              target held (TargetSpec::hold_ready) sends kReady only
//              through SendReady(), after Accept.
//   initiator: SessionFactory::OpenInitiator -> out of band: connect_info()
//              goes to the target (ConnectTarget) -> WaitReady() -> RunSweep()
//              or RunLatency() -> WaitReverseDone() / CheckReverse().
//
// Errors (StatusOr/Status): INVALID_ARGUMENT (bad addresses, a device that
// does not carry the address), NOT_FOUND (no IPv4 for rdma_cm, no GID pair),
// FAILED_PRECONDITION / UNIMPLEMENTED from memory (GPU asked for and not
// possible: never a host fallback), UNAVAILABLE (rejected, unreachable, a
// QP that broke), DEADLINE_EXCEEDED, ABORTED (stopped or cancelled).
// Thread safety: a session is used by one thread at a time, except
// TargetSession::Connect, which may run on an RPC thread while Accept waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/initiator.h"
#include "agent/bench/oob.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/write_lat.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "agent/verbs/cm.h"
#include "agent/verbs/data_events.h"
#include "agent/verbs/device_info.h"
#include "agent/verbs/port_events.h"

namespace gdrbench::agent::bench {

enum class CmMode { kAuto, kRdmaCm, kOob };
const char* CmModeName(CmMode m);  // "auto", "rdma_cm", "oob"

// What one end publishes about its QPs and port in out-of-band mode.
struct OobEndpoint {
  std::vector<QpAddress> qps;
  uint8_t port = 1;
  uint16_t lid = 0;
  uint32_t mtu_bytes = 0;           // the port's active MTU
  bool roce = false;                // Ethernet link layer
  std::vector<GidCandidate> gids;   // the port's GID table (populated entries)
};

// The initiator's half of the out-of-band exchange, for the target.
struct OobPeer {
  OobEndpoint endpoint;
  std::vector<RemoteSlice> slices;  // the initiator's buffer, for the reverse direction
  uint32_t target_gid_index = 0;    // the GID the target is to use (the agreement)
  std::array<uint8_t, 16> initiator_gid{};
  bool global = true;
};

struct TargetSpec {
  verbs::DeviceInfo device;  // resolved once per test by the service
  std::string bind_address;  // rdma_cm; empty: the device's first IPv4
  memory::MemorySpec memory;
  SweepOptions options;
  uint64_t slice_bytes = 0;  // per QP (TargetSliceBytes)
  CmMode cm = CmMode::kAuto;
  // rdma_cm: called on the accepting thread once, before the first
  // connection is accepted, so before the initiator can send (out of band
  // the caller of Connect knows that moment itself). May be empty.
  std::function<void()> before_first_accept;
  // The initiator may connect but not send until SendReady(): out of band
  // Connect() brings the QPs up without kReady; rdma_cm accepts as always
  // (its initiator was told to wait for kReady: InitiatorSpec).
  bool hold_ready = false;
};

struct TargetOpened {
  CmMode cm = CmMode::kRdmaCm;       // as resolved (auto -> rdma_cm or oob)
  std::string address;               // rdma_cm listen address
  uint16_t cm_port = 0;
  std::vector<RemoteSlice> slices;   // one per QP
  OobEndpoint oob;                   // out of band only
  std::string memory_kind;
  std::string registration;
};

class TargetSession {
 public:
  virtual ~TargetSession() = default;
  virtual const TargetOpened& opened() const = 0;
  // Waits until the initiator's QPs are connected: rdma_cm accepts them; out
  // of band it waits until Connect() brought them to RTS. DEADLINE_EXCEEDED
  // after `timeout_ms`, ABORTED when `stop`.
  virtual absl::Status Accept(const std::atomic<bool>& stop, int timeout_ms) = 0;
  // Out of band: the initiator's QPs and buffer; brings this side's QPs to
  // RTR/RTS and tells the initiator it may send (control.h kReady).
  // FAILED_PRECONDITION in rdma_cm mode or when already connected.
  virtual absl::Status Connect(const OobPeer& peer) = 0;
  // A held target (TargetSpec::hold_ready), after Accept: kReady on every
  // QP, from the thread that runs Run. UNAVAILABLE when a QP cannot send.
  virtual absl::Status SendReady() = 0;
  // After Accept: this side's part of the test, the reverse sweep of a
  // bidirectional bandwidth test (then kReverseDone) or the latency
  // responder; `on_size` gets each size's outcome. Nothing for a
  // one-direction bandwidth test.
  virtual void Run(const std::atomic<bool>& stop,
                   const std::function<void(const SizeOutcome&)>& on_size) = 0;
  virtual memory::Buffer& buffer() = 0;
  virtual uint64_t slice_bytes() const = 0;
  virtual const verbs::PathInfo& path() const = 0;
  // The verbs objects whose async errors end this side's part of the test
  // (data_events.h), as the initiator's do; none (no context) for the fake
  // NIC.
  virtual verbs::DataObjects data_objects() const { return {}; }
};

struct InitiatorSpec {
  verbs::DeviceInfo device;
  std::string bind_address;          // rdma_cm source; empty: the device's first IPv4
  memory::MemorySpec memory;
  SweepOptions options;
  CmMode cm = CmMode::kRdmaCm;       // the target's, as resolved
  std::vector<RemoteSlice> remote;   // the target's buffer, one slice per QP
  // rdma_cm
  std::string target_address;
  uint16_t target_port = 0;
  // out of band
  OobEndpoint target;
  int timeout_ms = 10000;            // per connection step
  // The target was opened held: wait for its kReady (rdma_cm too) up to
  // `cancelled` (the call's deadline), not timeout_ms.
  bool wait_for_start = false;
};

class InitiatorSession {
 public:
  virtual ~InitiatorSession() = default;
  virtual const verbs::PathInfo& path() const = 0;
  virtual std::string memory_kind() const = 0;
  virtual std::string registration() const = 0;
  // Out of band: this end's half of the exchange, to hand to the target,
  // and how the GIDs were chosen.
  virtual std::optional<OobPeer> connect_info() const = 0;
  virtual std::string gid_choice() const { return ""; }
  // Out of band, or a held target (InitiatorSpec::wait_for_start): waits
  // for the target's kReady on every QP; rdma_cm otherwise: returns at once.
  virtual absl::Status WaitReady(const std::atomic<bool>& cancelled, int timeout_ms) = 0;
  // The bandwidth sweep (RunSweep, write_sweep.h); returns the sizes run.
  virtual size_t RunSweep(const SweepIdentity& identity, const std::atomic<bool>& cancelled,
                          const std::function<void(const SizeOutcome&)>& on_size) = 0;
  // The latency sweep (write_lat.h): every size, this side posting first.
  virtual size_t RunLatency(const SweepIdentity& identity, const std::atomic<bool>& cancelled,
                            const std::function<void(const SizeOutcome&)>& on_size) = 0;
  virtual absl::Status WaitReverseDone(const std::atomic<bool>& cancelled, int timeout_ms) = 0;
  virtual std::vector<ReverseCheck> CheckReverse() = 0;
  // The verbs objects whose async errors end the test (data_events.h);
  // none (no context) for the fake NIC.
  virtual verbs::DataObjects data_objects() const { return {}; }
};

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  // The device as this node has it (ports, GIDs, addresses, NUMA node):
  // resolved once per test. INVALID_ARGUMENT when it is absent, naming what
  // is present.
  virtual absl::StatusOr<verbs::DeviceInfo> ResolveDevice(const std::string& name) = 0;
  virtual absl::StatusOr<std::unique_ptr<TargetSession>> OpenTarget(const TargetSpec& spec) = 0;
  virtual absl::StatusOr<std::unique_ptr<InitiatorSession>> OpenInitiator(
      const InitiatorSpec& spec) = 0;
  // A flag that stops a test on `device` port `port` when `cancelled` is
  // set or the port goes down (port_events.h), and the fault that did it.
  // Default (the fake NIC): `cancelled` only.
  virtual std::unique_ptr<verbs::PortWatch> WatchPort(const std::string& device, uint32_t port,
                                                      const std::atomic<bool>& cancelled) {
    return verbs::CancelOnlyWatch(cancelled);
  }
  // A flag that stops a test when `cancelled` is set or one of `objects`
  // reports an error (IBV_EVENT_CQ_ERR, QP fatal: data_events.h), and the
  // fault. Default (the fake NIC): `cancelled` only.
  virtual std::unique_ptr<verbs::DataWatch> WatchData(const verbs::DataObjects& objects,
                                                      const std::atomic<bool>& cancelled) {
    return verbs::CancelOnlyDataWatch(cancelled);
  }
};

// The real factory: librdmacm for rdma_cm, libibverbs for out of band; auto
// = rdma_cm when the port's netdev has an IPv4 address, else out of band.
std::unique_ptr<SessionFactory> MakeVerbsSessionFactory(const FsRoot& fs);

// auto -> rdma_cm when `port` has an IPv4 address, else oob.
CmMode ResolveCmMode(CmMode asked, const verbs::PortInfo& port);

// INVALID_ARGUMENT for a service level in rdma_cm mode (options.sl): rdma_cm
// has no way to set it.
absl::Status CheckServiceLevel(CmMode cm, const SweepOptions& options);

}  // namespace gdrbench::agent::bench
