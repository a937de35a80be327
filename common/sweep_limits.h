// The one home of every sweep default and bound:
//  - the data path's, shared by the agent (agent/bench/sweep_options.h
//    validates every request against them) and the controller
//    (controller/sweep/params.h checks a request before any agent is
//    called). Defaults are perftest's, so results compare: ib_write_bw's
//    DEF_ITERS_WB 5000, tx depth 128, CQ moderation 100, post list 1, one
//    QP, QP timeout 14; ib_write_lat's DEF_ITERS 1000 and DEF_SIZE_LAT 2;
//  - the sweep's (`gdrbench sweep`, gdrbench-server's v1.SweepSpec, mapped
//    by controller/sweep/spec.h): sizes, iterations, schedule, running;
//  - the verdict policy's (controller/analysis/verdicts.h DefaultPolicy).
// `gdrbench sweep --help` and `gdrbench pair --help` print these values
// (docs/cli.md is generated from them). Header-only, no dependencies: the
// controller links no agent library.
#pragma once

#include <array>
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
// Service level (perftest -S, NCCL_IB_SL): 4 bits; traffic class (perftest
// --tclass / -T, NCCL_IB_TC): the GRH's 8 bits (DSCP << 2 | ECN).
inline constexpr uint32_t kMaxServiceLevel = 15;
inline constexpr uint32_t kMaxTrafficClass = 255;

// perftest -a: 2 B .. 8 MiB, powers of two.
inline constexpr uint64_t kAllSizesMin = 2;
inline constexpr uint64_t kAllSizesMax = 8ull << 20;
inline std::vector<uint64_t> AllSizes() {
  std::vector<uint64_t> out;
  for (uint64_t s = kAllSizesMin; s <= kAllSizesMax; s <<= 1) out.push_back(s);
  return out;
}

// `gdrbench pair`: perftest -a's sizes; the iterations are the agent's
// (kDefaultIterations) unless --duration.
inline constexpr char kDefaultPairSizes[] = "all";

// A sweep (`gdrbench sweep`, v1.SweepSpec): what a test runs.
inline constexpr std::array<uint64_t, 2> kDefaultSweepSizes = {64ull << 10, 1ull << 20};
inline constexpr uint64_t kDefaultSweepIterations = 1000;  // unless a duration is given
// SweepParams.seed (the verify pattern's) of a sweep or a `gdrbench pair`:
// 0 = drawn at random, per run (a sweep: each test's seed derived from it and
// the test, controller/run/pair_tester.h TestSeed) or per test (pair); every
// test's seed is recorded (PairResult.verify_seed) so it can be run again.
inline constexpr uint64_t kDefaultPatternSeed = 0;
inline constexpr char kDefaultMode[] = "all-pairs";
inline constexpr char kDefaultConnection[] = "auto";  // rdma_cm when the port has an IP
// The schedule.
inline constexpr uint32_t kDefaultQuickRounds = 3;  // random perfect matchings of --mode quick
inline constexpr uint32_t kMaxQuickRounds = 100000;
inline constexpr uint64_t kDefaultScheduleSeed = 1;  // of --mode quick
// Running.
inline constexpr uint32_t kDefaultParallel = 64;     // concurrent tests and preflights
inline constexpr uint32_t kMaxParallel = 4096;
inline constexpr uint32_t kDefaultRetries = 1;       // extra attempts for a test that is not OK
inline constexpr uint32_t kDefaultRetestLow = 1;     // outlier retest passes
inline constexpr uint32_t kMaxRetestLow = 10;
inline constexpr int kDefaultRpcTimeoutMs = 10000;   // every unary RPC to an agent
inline constexpr int kMinRpcTimeoutMs = 100;
inline constexpr int kMaxRpcTimeoutMs = 3600 * 1000;
inline constexpr int kDefaultConnectTimeoutMs = 3000;  // an agent not there fails within this
// The duration estimate (--dry-run, the default per-test deadline): set-up
// per test when no earlier run measured it, the link rate when neither the
// inventory nor the agents give one, and the deadline of a test from it.
inline constexpr double kDefaultSetupSeconds = 0.05;
inline constexpr double kDefaultAssumedLinkGbps = 100;
inline constexpr double kSweepTimeoutFactor = 4;     // estimate x 4 + 30 s
inline constexpr double kSweepTimeoutSlackSeconds = 30;

// The verdict policy (v1.VerdictPolicy; controller/analysis/verdicts.h).
inline constexpr double kDefaultMinFractionOfLink = 0.9;  // absolute: pass at >= this x link rate
inline constexpr double kDefaultMadK = 3.0;               // fleet-relative: low below median - k x MAD
inline constexpr double kMaxMadK = 100.0;
inline constexpr double kDefaultFleetMinDrop = 0.10;      // ... and this fraction below the median
inline constexpr double kDefaultBaselineTolerance = 0.05; // low when this far below the baseline
// GPUDirect on a PIX/PXB path runs at the host rate; 20 % below it is a
// GPU-side problem worth a look (a PHB/SYS path, peermem off the fast path).
inline constexpr double kDefaultMinGpuHostRatio = 0.8;
// Link counters: retransmissions above 0.1 % of the packets a port moved
// flag the test; link counters flag any growth.
inline constexpr double kDefaultMaxRetransmitFraction = 0.001;
inline constexpr uint64_t kDefaultMinRetransmits = 0;

}  // namespace gdrbench::sweep_limits
