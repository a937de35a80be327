#include "agent/bench/write_lat.h"

#include <algorithm>
#include <cmath>

namespace gdrbench::agent::bench {

LatencyStats LatencyFromPostTimes(const std::vector<int64_t>& post_ns) {
  LatencyStats s;
  constexpr size_t kTail = 2;  // perftest's LAT_MEASURE_TAIL
  if (post_ns.size() < kTail + 2) return s;
  std::vector<int64_t> delta(post_ns.size() - 1);
  for (size_t i = 0; i + 1 < post_ns.size(); ++i) delta[i] = post_ns[i + 1] - post_ns[i];
  std::sort(delta.begin(), delta.end());
  const size_t n = delta.size() - kTail;
  // A round trip in ns; latency is half of it, in us.
  auto us = [](double rtt_ns) { return rtt_ns / 2.0 / 1000.0; };
  double median = (n - 1) % 2 ? (static_cast<double>(delta[n / 2]) + delta[n / 2 - 1]) / 2
                              : static_cast<double>(delta[n / 2]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += us(static_cast<double>(delta[i]));
  s.t_avg_us = sum / static_cast<double>(n);
  double var = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = s.t_avg_us - us(static_cast<double>(delta[i]));
    var += d * d;
  }
  s.t_stdev_us = std::sqrt(var / static_cast<double>(n));
  s.t_min_us = us(static_cast<double>(delta[0]));
  s.t_max_us = us(static_cast<double>(delta[n]));
  s.t_typical_us = us(median);
  auto at = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(static_cast<double>(n) * q));
    return us(static_cast<double>(delta[std::min(k, delta.size() - 1)]));
  };
  s.p99_us = at(0.99);
  s.p999_us = at(0.999);
  s.samples = n;
  return s;
}

}  // namespace gdrbench::agent::bench
