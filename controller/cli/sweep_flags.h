// The test-parameter flags of `gdrbench pair` and `gdrbench sweep`,
// registered once (AddSweepFlags) with their defaults and bounds from
// common/sweep_limits.h, and their mapping to v1::SweepParams, checked by
// controller/sweep/params.h before any agent is called (the agent validates
// again: it trusts no controller). Thread-safe: no state.
#pragma once

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "common/sweep_limits.h"
#include "controller/sweep/params.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::controller::cli {

using sweep::ParseSizes;

// The values of the flags; defaults are `gdrbench pair`'s (AddSweepFlags
// sets `gdrbench sweep`'s).
struct SweepFlags {
  std::string sizes{sweep_limits::kDefaultPairSizes};  // "all" | "2,64K,1M" | "2-8M"
  uint64_t iterations = 0;       // per size and QP; 0 = the command's default unless --duration
  double duration_s = 0;         // per size; > 0 selects duration mode
  uint64_t warmup = 0;           // iterations per size and QP before measuring
  uint32_t qps = sweep_limits::kDefaultQps;
  uint32_t tx_depth = sweep_limits::kDefaultTxDepth;
  uint32_t cq_moderation = 0;    // 0 = perftest's: min(100, tx depth)
  uint32_t post_list = sweep_limits::kDefaultPostList;
  std::string memory = "host";   // pair: host | hugepage | gpu:<i|BDF> | gpu-staged:<i|BDF>
  bool bidirectional = false;
  bool verify = false;
  uint64_t seed = sweep_limits::kDefaultPatternSeed;  // 0: a random one per test
  uint32_t qp_timeout = sweep_limits::kDefaultQpTimeout;  // perftest -u: 4.096 us x 2^N
  std::string cm{sweep_limits::kDefaultConnection};       // auto | rdma_cm | oob
  int gid_index = -1;            // perftest -x; -1: chosen by both ends (out of band)
  std::string test = "write_bw"; // write_bw | write_lat (ib_write_lat's ping-pong)
  bool disable_pcie_relaxed = false;  // perftest --disable_pcie_relaxed
  int64_t sl = -1;               // perftest -S; -1: unset (0, or the inventory's qos.sl)
  int64_t tclass = -1;           // perftest --tclass; -1: unset (as sl)
};

// Which command the flags are for. kSweep: sizes and iterations default to
// the sweep's (64K,1M, 1000), --memory is the sweep's own (a kind or a list,
// SweepOptions::memory) and --seed its schedule's; kPair adds
// --cq-moderation, --memory (a memory spec), --seed (the verify pattern's)
// and --test.
enum class SweepFlagSet { kPair, kSweep };

// Registers the flags on `cmd`, bound to `flags` (set to the command's
// defaults first).
void AddSweepFlags(CLI::App* cmd, SweepFlags& flags, SweepFlagSet set);

// The flags as v1::SweepParams; INVALID_ARGUMENT naming the flag for values
// that cannot be right (--iterations with --duration, a negative duration,
// a value past the agent's bounds, ...). iterations 0 and no duration stay
// 0 (the agent's default).
absl::StatusOr<v1::SweepParams> ToSweepParams(const SweepFlags& flags);

}  // namespace gdrbench::controller::cli
