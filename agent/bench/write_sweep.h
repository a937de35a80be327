// Runs a sweep (warm-up, measured pass and, with verify, the pattern pass of
// each size) over QPs that are already connected, and turns loop results into
// per-size results with perftest's semantics. No protobuf here: the service
// converts SizeOutcome to v1::SizeResult.
// Thread safety: one sweep per thread; it owns the QPs and CQ while it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agent/bench/sweep_options.h"
#include "agent/bench/verbs_ops.h"
#include "agent/bench/write_loop.h"

namespace gdrbench::agent::bench {

struct SizeOutcome {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;     // measured WRs, all QPs
  double bw_avg_gbps = 0;
  double bw_peak_gbps = 0;
  double msg_rate_mpps = 0;
  int64_t duration_ns = 0;     // first post to last completion
  bool ok = false;
  std::string error;           // "completion error at 65536 B on QP 0: remote access error ..."
  bool pattern_written = false;  // the verify pass wrote this size's region
  std::string perftest_command;
};

// Turns one measured loop into a result (pure; unit-tested).
SizeOutcome Summarize(const LoopResult& loop, const LoopScratch& scratch, const LoopParams& params,
                      uint64_t size_bytes);

// The message for a failed loop: the call or ibv_wc_status_str, the size and QP.
std::string DescribeFailure(const LoopResult& loop, uint64_t size_bytes);

struct SweepEndpoint {
  ibv_cq* cq = nullptr;
  // Per QP: the QP, the start of its local slice, and the remote slice.
  std::vector<QpTarget> slices;
  uint64_t slice_bytes = 0;
  // Writes the verify pattern into the local buffer before the pattern pass
  // (absolute buffer offset, length); returns false with `error` set.
  std::function<bool(uint64_t offset, uint64_t length, std::string* error)> fill_pattern;
  uint64_t local_base_offset_of_slice0 = 0;  // buffer offset of slice 0 (normally 0)
};

struct SweepIdentity {  // for the perftest command line
  std::string device;
  int gid_index = -1;
  std::string server_address;
};

// Runs every size in order and calls `on_size` after each; stops after the
// first failed size (the QPs are in error state then) or when `cancelled`.
// Returns the number of sizes that ran.
size_t RunSweep(const SweepOptions& options, const SweepEndpoint& endpoint,
                const SweepIdentity& identity, const std::atomic<bool>& cancelled,
                const std::function<void(const SizeOutcome&)>& on_size);

}  // namespace gdrbench::agent::bench
