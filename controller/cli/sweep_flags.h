// The sweep options of `gdrbench pair` (and of the later `gdrbench sweep`):
// the flag values main.cc fills, and their conversion to v1::SweepParams.
// The agent validates again (it trusts no controller); this catches bad
// flags before any agent is called. Thread-safe: no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/sweep_limits.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::controller::cli {

struct SweepFlags {
  std::string sizes = "all";     // "all" | "2,64K,1M" | "2-8M"
  uint64_t iterations = 0;       // per size and QP; 0 = perftest's (sweep_limits.h) unless --duration
  double duration_s = 0;         // per size; > 0 selects duration mode
  uint64_t warmup = 0;           // iterations per size and QP before measuring
  uint32_t qps = sweep_limits::kDefaultQps;
  uint32_t tx_depth = sweep_limits::kDefaultTxDepth;
  uint32_t cq_moderation = 0;    // 0 = perftest's: min(100, tx depth)
  uint32_t post_list = sweep_limits::kDefaultPostList;
  std::string memory = "host";   // host | hugepage | gpu:<i|BDF> | gpu-staged:<i|BDF>
  bool bidirectional = false;
  bool verify = false;
  uint64_t seed = 1;
  uint32_t qp_timeout = sweep_limits::kDefaultQpTimeout;  // perftest -u: 4.096 us x 2^N
  std::string cm = "auto";       // auto | rdma_cm | oob (auto: rdma_cm when the port has an IP)
  int gid_index = -1;            // perftest -x; -1: chosen by both ends (out of band)
  std::string test = "write_bw"; // write_bw | write_lat (ib_write_lat's ping-pong)
};

// "all" (perftest -a: 2 B .. 8 MiB), a list "2,64K,1M" or a power-of-two
// range "2-8M"; K/M/G are powers of 1024. Ascending, without duplicates.
// INVALID_ARGUMENT with the accepted forms otherwise.
absl::StatusOr<std::vector<uint64_t>> ParseSizes(absl::string_view text);

// INVALID_ARGUMENT naming the flag for values that cannot be right
// (--iterations with --duration, a negative duration, ...).
absl::StatusOr<v1::SweepParams> ToSweepParams(const SweepFlags& flags);

}  // namespace gdrbench::controller::cli
