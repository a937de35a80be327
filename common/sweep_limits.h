// The one home of the data path's defaults and bounds, shared by the agent
// (agent/bench/sweep_options.h validates every request against them) and the
// controller (controller/cli/sweep_flags.h checks flags before any agent is
// called). Defaults are perftest's, so results compare: ib_write_bw's
// DEF_ITERS_WB 5000, tx depth 128, CQ moderation 100, post list 1, one QP,
// QP timeout 14; ib_write_lat's DEF_ITERS 1000 and DEF_SIZE_LAT 2.
// Header-only, no dependencies: the controller links no agent library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdrbench::sweep_limits {

// Defaults.
inline constexpr uint64_t kDefaultIterations = 5000;
inline constexpr uint64_t kDefaultLatencyIterations = 1000;
inline constexpr uint64_t kDefaultLatencySize = 2;
inline constexpr uint32_t kDefaultTxDepth = 128;
inline constexpr uint32_t kDefaultCqModeration = 100;
inline constexpr uint32_t kDefaultPostList = 1;
inline constexpr uint32_t kDefaultQps = 1;
// The QP's local ACK timeout exponent: 4.096 us x 2^N (perftest -u), 67 ms.
inline constexpr uint32_t kDefaultQpTimeout = 14;
// perftest's inline size for RC write_lat on the NICs it knows (DEF_INLINE_WRITE).
inline constexpr uint32_t kDefaultLatencyInline = 220;

// Bounds (a request past them gets INVALID_ARGUMENT, never a crash or an
// hour-long sweep).
inline constexpr uint64_t kMinSizeBytes = 1;
inline constexpr uint64_t kMaxSizeBytes = 1ull << 30;        // 1 GiB per message
inline constexpr size_t kMaxSizes = 64;
inline constexpr uint64_t kMaxIterations = 100'000'000;
inline constexpr int64_t kMaxDurationNs = 600'000'000'000;   // 10 min per size
inline constexpr uint32_t kMaxQps = 64;
inline constexpr uint32_t kMaxTxDepth = 8192;
inline constexpr uint32_t kMaxPostList = 64;
inline constexpr uint32_t kMinQpTimeout = 1;
inline constexpr uint32_t kMaxQpTimeout = 31;                // 5 bits; 0 would be infinite
inline constexpr uint32_t kMaxInline = 1024;
inline constexpr uint64_t kMaxBufferBytes = 16ull << 30;     // per test, all QPs
inline constexpr int kMaxGidIndex = 255;

// perftest -a: 2 B .. 8 MiB, powers of two.
inline constexpr uint64_t kAllSizesMin = 2;
inline constexpr uint64_t kAllSizesMax = 8ull << 20;
inline std::vector<uint64_t> AllSizes() {
  std::vector<uint64_t> out;
  for (uint64_t s = kAllSizesMin; s <= kAllSizesMax; s <<= 1) out.push_back(s);
  return out;
}

}  // namespace gdrbench::sweep_limits
