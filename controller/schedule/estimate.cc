// The plan's wall-time estimate: per test from its sizes and the link rate,
// per schedule from its rounds.
#include <algorithm>

#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

double EstimateTestSeconds(const EstimateParams& p) {
  double s = p.per_test_overhead_s;
  const double bits_per_s = std::max(p.link_gbps, 1e-3) * 1e9;
  for (uint64_t size : p.sizes_bytes) {
    const double per_wr = size * 8.0 / bits_per_s;
    if (p.duration_ns > 0) {
      s += p.duration_ns / 1e9 + p.warmup_iterations * per_wr;
    } else {
      s += (p.iterations + p.warmup_iterations) * per_wr;
    }
    if (p.verify) s += per_wr;  // one checksum pass per size, at about wire speed
  }
  return s;
}

double EstimateScheduleSeconds(const Schedule& schedule, const EstimateParams& params) {
  return schedule.rounds() * EstimateTestSeconds(params);
}

}  // namespace gdrbench::controller::schedule
