// The active side of a test: resolves the target through rdma_cm from the
// NIC's own address, allocates and registers the local buffer on that NIC
// (NUMA-local), creates one RC QP per connection sharing one CQ, and
// connects each QP with its slice in the connect data.
//
// Errors: INVALID_ARGUMENT (bad address, device mismatch), NOT_FOUND (device
// without IPv4), FAILED_PRECONDITION / UNIMPLEMENTED from memory (GPU asked
// for and not possible: never a host fallback), UNAVAILABLE (rejected,
// unreachable), DEADLINE_EXCEEDED (no answer in time).
// Thread safety: one thread uses an Initiator at a time.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "agent/verbs/cm.h"
#include "agent/verbs/data_events.h"
#include "agent/verbs/device_info.h"
#include "agent/verbs/handles.h"
#include "common/fs_root.h"

namespace gdrbench::agent::bench {

struct RemoteSlice {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint64_t length = 0;
};

// The reverse direction's data check of one size (bidirectional + verify).
struct ReverseCheck {
  uint64_t size_bytes = 0;
  bool verified = false;
  uint64_t first_bad_offset = 0;  // within the region, when !verified
  std::string error;              // "" when verified
};

struct InitiatorConfig {
  verbs::DeviceInfo device;  // resolved once per test
  std::string bind_address;  // empty: the device's first IPv4 address
  std::string target_address;
  uint16_t target_port = 0;
  memory::MemorySpec memory;
  SweepOptions options;
  std::vector<RemoteSlice> remote;  // one per QP
  int timeout_ms = 10000;           // per connection step
};

class Initiator {
 public:
  static absl::StatusOr<std::unique_ptr<Initiator>> Connect(const FsRoot& fs,
                                                            const InitiatorConfig& config);

  const verbs::PathInfo& path() const { return path_; }
  std::string memory_kind() const { return buffer_->kind_name(); }
  const std::string& registration() const { return registration_; }
  // What RunSweep needs; valid while this object lives.
  SweepEndpoint endpoint();
  VerbsOps& ops() { return *ops_; }
  // Its CQs and QPs on librdmacm's context of the device (data_events.h).
  verbs::DataObjects data_objects() const;

  // Bidirectional tests: waits for the target's "reverse sweep done"
  // message (control.h), so this side's QPs and buffer stay up while the
  // target still writes into them. DEADLINE_EXCEEDED after `timeout_ms`,
  // ABORTED when `cancelled`, UNAVAILABLE when the QP broke meanwhile.
  absl::Status WaitReverseDone(const std::atomic<bool>& cancelled, int timeout_ms);
  // Bidirectional tests with verify, after WaitReverseDone: checks the
  // reverse verify region of every size in every slice of this side's
  // buffer (the pattern the target's last pass left, ReverseSeed).
  std::vector<ReverseCheck> CheckReverse(const SweepOptions& options);

 private:
  Initiator() = default;
  // Connect's steps: one rdma_cm id per QP with its route resolved from
  // `src` on the configured device; the QPs; each QP's connection.
  absl::Status ResolveRoutes(const InitiatorConfig& c, const std::string& bind, const sockaddr_storage& src,
                             const sockaddr_storage& dst);
  absl::Status CreateQps(const SweepOptions& o);
  absl::Status ConnectQps(const InitiatorConfig& c);

  // Members in creation order; destroyed in reverse.
  verbs::EventChannelPtr channel_;
  std::vector<verbs::CmIdPtr> ids_;
  verbs::PdPtr pd_;
  std::unique_ptr<memory::Buffer> buffer_;
  memory::MrPtr mr_;
  verbs::CqPtr cq_;
  verbs::CqPtr recv_cq_;
  std::vector<verbs::QpPtr> qps_;
  std::unique_ptr<VerbsOps> ops_;

  uint64_t slice_bytes_ = 0;
  uint64_t seed_ = 0;  // TestSeed
  BufferLayout layout_;
  std::vector<RemoteSlice> remote_;
  std::string registration_;
  verbs::PathInfo path_;
};

// The pattern seed of one test: the controller's `seed` mixed with the
// target's registration (rkey and address of its first slice), which both
// sides know without another message. A re-test of the same pair and sizes
// that gets the same memory back registers it again under another rkey, so
// its pattern differs from what the earlier test left (the poison below is
// the guarantee; this keeps a controller that always sends one seed from
// writing the same bytes twice). Each size then uses SizeSeed(TestSeed, size)
// and the reverse direction ReverseSeed of it.
uint64_t TestSeed(uint64_t seed, const std::vector<RemoteSlice>& target_slices);

// Overwrites the verify regions offsets[i] (sizes[i] bytes) of every QP
// slice of `buffer` with a pattern no test writes (another seed), so a
// region whose verify WRITE never lands fails its check even when the
// memory still held an earlier test's pattern (cuMemAlloc memory is never
// cleared). Called by each side on the regions it will check, before the
// peer may write. Errors: those of Buffer::FillPattern, with the size named.
absl::Status PoisonRegions(memory::Buffer& buffer, const std::vector<uint64_t>& sizes,
                           const std::vector<uint64_t>& offsets, uint64_t slice_bytes,
                           uint32_t qps, uint64_t seed);

// Checks the verify region offsets[i] (sizes[i] bytes) of every QP slice of
// `buffer` against the pattern of SizeSeed(`seed`, sizes[i]) (`seed`: the
// TestSeed, or its ReverseSeed): one result per size, the first mismatch of
// each.
std::vector<ReverseCheck> CheckRegions(memory::Buffer& buffer, const std::vector<uint64_t>& sizes,
                                       const std::vector<uint64_t>& offsets, uint64_t slice_bytes,
                                       uint32_t qps, uint64_t seed);

// Checks the target's per-QP slices against the layout of `options` and
// returns their common length, the stride of both sides' buffers (a region
// sits at the same offset on both). INVALID_ARGUMENT naming what differs.
absl::StatusOr<uint64_t> CheckRemoteSlices(const std::vector<RemoteSlice>& remote,
                                           const SweepOptions& options);

}  // namespace gdrbench::agent::bench
