// The parameters of one RC RDMA WRITE sweep, their defaults (perftest
// ib_write_bw's, so results compare), their limits and their validation.
// Pure logic: no hardware, thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::agent::bench {

// Defaults: perftest ib_write_bw's (DEF_ITERS_WB 5000, tx depth 128, CQ
// moderation 100, post list 1, one QP). Every default lives here.
inline constexpr uint64_t kDefaultIterations = 5000;
inline constexpr uint32_t kDefaultTxDepth = 128;
inline constexpr uint32_t kDefaultCqModeration = 100;
inline constexpr uint32_t kDefaultPostList = 1;
inline constexpr uint32_t kDefaultQps = 1;

// Limits every request is checked against (a bad request gets
// INVALID_ARGUMENT, never a crash or an hour-long sweep).
inline constexpr uint64_t kMinSizeBytes = 1;
inline constexpr uint64_t kMaxSizeBytes = 1ull << 30;        // 1 GiB per message
inline constexpr size_t kMaxSizes = 64;
inline constexpr uint64_t kMaxIterations = 100'000'000;
inline constexpr int64_t kMaxDurationNs = 600'000'000'000;   // 10 min per size
inline constexpr uint32_t kMaxQps = 64;
inline constexpr uint32_t kMaxTxDepth = 8192;
inline constexpr uint32_t kMaxPostList = 64;
inline constexpr uint64_t kMaxBufferBytes = 16ull << 30;      // per test, all QPs

// perftest -a: 2 B .. 8 MiB, powers of two. (Parsing size flags is the
// controller's: controller/cli/sweep_flags.h.)
std::vector<uint64_t> AllSizes();

struct SweepOptions {
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
};

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
// A bidirectional test adds a 64-byte "forward done" marker at the end of
// slice 0: the initiator writes a pattern there once its sweep is over, and
// the target disconnects only after its reverse sweep is over and the marker
// is there, so neither side tears the QPs down under the other.
struct BufferLayout {
  uint64_t slice_bytes = 0;               // per QP
  std::vector<uint64_t> verify_offsets;   // per size, within a slice
  uint64_t done_marker_offset = 0;        // bidirectional only, within slice 0
};
inline constexpr uint64_t kDoneMarkerBytes = 64;
BufferLayout PlanLayout(const std::vector<uint64_t>& sizes_bytes, bool verify,
                        bool bidirectional = false);
// The pattern seed of the done marker (distinct from every verify seed use).
inline uint64_t DoneMarkerSeed(uint64_t seed) { return seed ^ 0x5eedd0e5d0e5ull; }

// The ib_write_bw command line that measures the same thing as one size of
// this sweep, e.g. "ib_write_bw -d rxe0 -x 1 -s 65536 -n 5000 -q 1 -t 128
// -Q 100 -l 1 -R --report_gbits 10.0.0.2".
std::string PerftestCommand(const SweepOptions& options, uint64_t size_bytes,
                            const std::string& device, int gid_index,
                            const std::string& server_address);

// "64K", "8M", "2" (for tables).
std::string FormatSize(uint64_t bytes);

}  // namespace gdrbench::agent::bench
