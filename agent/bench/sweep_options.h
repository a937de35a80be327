// The parameters of one RC RDMA WRITE sweep, their defaults (perftest
// ib_write_bw's, so results compare), their limits and their validation.
// Pure logic: no hardware, thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/sweep_limits.h"

namespace gdrbench::agent::bench {

// Defaults and limits: common/sweep_limits.h, the one home the controller
// shares.
using sweep_limits::AllSizes;
using sweep_limits::kDefaultCqModeration;
using sweep_limits::kDefaultIterations;
using sweep_limits::kDefaultPostList;
using sweep_limits::kDefaultQps;
using sweep_limits::kDefaultQpTimeout;
using sweep_limits::kDefaultTxDepth;
using sweep_limits::kMaxBufferBytes;
using sweep_limits::kMaxDurationNs;
using sweep_limits::kMaxIterations;
using sweep_limits::kMaxPostList;
using sweep_limits::kMaxQps;
using sweep_limits::kMaxQpTimeout;
using sweep_limits::kMaxSizeBytes;
using sweep_limits::kMaxSizes;
using sweep_limits::kMaxTxDepth;
using sweep_limits::kMinSizeBytes;

enum class TestKind { kWriteBw, kWriteLat };

struct SweepOptions {
  TestKind test = TestKind::kWriteBw;
  std::vector<uint64_t> sizes_bytes;  // ascending
  uint64_t iterations = kDefaultIterations;  // per size, per QP; 0 with duration_ns > 0
  int64_t duration_ns = 0;                   // per size; > 0 selects duration mode
  uint64_t warmup_iterations = 0;            // per size, per QP, not measured
  uint32_t qps = kDefaultQps;
  uint32_t tx_depth = kDefaultTxDepth;
  uint32_t cq_moderation = kDefaultCqModeration;
  uint32_t post_list = kDefaultPostList;
  bool bidirectional = false;
  bool verify = false;
  uint64_t seed = 1;
  uint32_t qp_timeout = kDefaultQpTimeout;  // 1 .. 31
  // write_lat: WRITEs of at most this many bytes go inline (perftest -I).
  uint32_t inline_size = 0;
  int gid_index = -1;  // both ends' GID index (perftest -x); -1: chosen
  // Memory registered with IBV_ACCESS_RELAXED_ORDERING (perftest's default;
  // false = its --disable_pcie_relaxed). Providers that lack it ignore it.
  bool relaxed_ordering = true;
  // Service level and traffic class of the QPs (perftest -S, --tclass/-T;
  // NCCL_IB_SL, NCCL_IB_TC). Out of band: ah_attr.sl and grh.traffic_class;
  // rdma_cm: the traffic class is RDMA_OPTION_ID_TOS, and the service level
  // comes from the path (IB) or the TOS-to-priority mapping (RoCE), so a
  // non-zero sl is refused there.
  uint8_t sl = 0;        // 0 .. 15
  int tclass = -1;       // 0 .. 255 (DSCP << 2 | ECN); -1: unset (rdma_cm: configfs default)
};

// The MR access flags of a test's buffers: local and remote write, plus
// relaxed ordering unless disabled (perftest, NCCL).
int MrAccess(const SweepOptions& options);

// Checks every field against the limits and the loop's invariants
// (cq_moderation <= tx_depth, post_list divides cq_moderation, iterations a
// multiple of post_list, exactly one of iterations and duration). Returns
// INVALID_ARGUMENT naming the field and the accepted range.
absl::Status Validate(const SweepOptions& options);

// Buffer layout, the same on both sides and for every QP slice: the data
// area [0, max size) that the measured passes write, then one verify region
// per size (in the order of sizes) that only the verify pass writes, so a
// later size never overwrites what an earlier one left for VerifyTarget.
//
// A bidirectional test with verify has a second set of regions for the
// reverse direction (target -> initiator). In each buffer a region is either
// a source or a destination, never both: the initiator fills its forward
// regions and the target checks its own; the target fills its reverse
// regions and the initiator checks its own. With one shared set, the
// initiator's fill of its forward source would overwrite what the target
// wrote there, and checking it would prove nothing about the reverse wire.
struct BufferLayout {
  uint64_t slice_bytes = 0;                     // per QP
  // write_lat: the peer's WRITEs land at [recv_offset, +size); this side's
  // come from [0, size). 0 for bandwidth tests.
  uint64_t recv_offset = 0;
  std::vector<uint64_t> verify_offsets;         // per size, within a slice
  std::vector<uint64_t> reverse_verify_offsets; // per size; bidirectional + verify only
};
BufferLayout PlanLayout(const std::vector<uint64_t>& sizes_bytes, bool verify,
                        bool bidirectional = false);
// The layout of `options` (write_lat: a send and a receive area).
BufferLayout PlanLayout(const SweepOptions& options);
// The per-QP slice a target allocates: the layout's, at least `floor_bytes`
// (what the controller asked for), rounded up to 4 KiB. The initiator slices
// its own buffer with the same stride, so a region sits at the same offset
// on both sides.
inline uint64_t TargetSliceBytes(const BufferLayout& layout, uint64_t floor_bytes) {
  uint64_t slice = layout.slice_bytes > floor_bytes ? layout.slice_bytes : floor_bytes;
  return (slice + 4095) & ~uint64_t{4095};
}
// One size's pattern seed within a test (`test_seed`: TestSeed): each size
// writes a pattern of its own, so no region can pass with another size's.
uint64_t SizeSeed(uint64_t test_seed, uint64_t size_bytes);
// The pattern seed of the reverse direction (never equal to `seed`, so a
// region that still held the forward pattern cannot pass the reverse check).
inline uint64_t ReverseSeed(uint64_t seed) { return seed ^ 0x7265766572736521ull; }

// The ib_write_bw command line that measures the same thing as one size of
// this sweep (duration mode: -D twice the duration, since perftest measures
// the middle half; relaxed ordering off, service level and traffic class
// named when set), e.g. "ib_write_bw -d rxe0 -x 1 -s 65536 -n 5000 -q 1 -t 128
// -Q 100 -l 1 -R --report_gbits 10.0.0.2".
std::string PerftestCommand(const SweepOptions& options, uint64_t size_bytes,
                            const std::string& device, int gid_index,
                            const std::string& server_address);

// The ib_write_lat command line for one size of a latency sweep, e.g.
// "ib_write_lat -d rxe0 -x 1 -s 2 -n 1000 -I 0 10.0.0.2".
std::string PerftestLatCommand(const SweepOptions& options, uint64_t size_bytes,
                               const std::string& device, int gid_index,
                               const std::string& server_address);

// "64K", "8M", "2" (for tables).
std::string FormatSize(uint64_t bytes);

}  // namespace gdrbench::agent::bench
