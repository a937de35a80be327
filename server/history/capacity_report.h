// The capacity report of a cluster over a period (capacity.proto): the
// per-run capacity statistics of its runs (capacity.h) added up per rail and
// topology group (the distribution over the period, a trend point per run,
// headroom against the link rate and the acceptance line), and the weakest
// links with their own trend over the period. Reads one small row per run
// plus one link trend per listed weak link; never a run's cells.
// Errors: the store's; INVALID_ARGUMENT for a bad period or count.
// Thread safety: as the store.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gdrbench/v1/capacity.pb.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

struct CapacityOptions {
  uint32_t days = 30;
  uint32_t weakest = 20;
  int64_t now_us = 0;          // the end of the period; 0 = now
  uint32_t max_runs = 10000;   // runs read at most (the newest)
};

absl::StatusOr<v1::CapacityReport> BuildCapacityReport(store::Store& store, const std::string& cluster,
                                                       const CapacityOptions& options);

}  // namespace gdrbench::server::history
