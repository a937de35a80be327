#include "agent/bench/bw_math.h"

#include <algorithm>

namespace gdrbench::agent::bench {

double GbpsOf(uint64_t bytes, int64_t ns) {
  if (ns <= 0) return 0;
  return static_cast<double>(bytes) * 8.0 / static_cast<double>(ns);
}

double MppsOf(uint64_t messages, int64_t ns) {
  if (ns <= 0) return 0;
  return static_cast<double>(messages) * 1e3 / static_cast<double>(ns);
}

double PeakGbps(const std::vector<Sample>& samples, size_t count, uint64_t message_bytes,
                uint64_t min_messages) {
  count = std::min(count, samples.size());
  min_messages = std::max<uint64_t>(min_messages, 1);
  double best = 0;
  size_t a = 0;
  // For each end b, move the start a as late as the window allows: the
  // shortest qualifying window ending at b.
  for (size_t b = 1; b < count; ++b) {
    while (a + 1 < b && samples[b].completed - samples[a + 1].completed >= min_messages) ++a;
    uint64_t msgs = samples[b].completed - samples[a].completed;
    if (msgs < min_messages) continue;
    best = std::max(best, GbpsOf(msgs * message_bytes, samples[b].t_ns - samples[a].t_ns));
  }
  return best;
}

}  // namespace gdrbench::agent::bench
