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
  if (count < 2) return 0;
  const uint64_t total = samples[count - 1].completed;
  // One start pointer per window size min_messages * 2^k (k < 48).
  std::vector<uint64_t> windows;
  for (uint64_t w = min_messages; w <= total && windows.size() < 48; w *= 2) windows.push_back(w);
  std::vector<size_t> start(windows.size(), 0);
  double best = 0;
  for (size_t b = 1; b < count; ++b) {
    const Sample& end = samples[b];
    for (size_t k = 0; k < windows.size(); ++k) {
      size_t& a = start[k];
      // The latest start that still leaves `windows[k]` bounded messages.
      while (a + 1 < b && end.completed >= samples[a + 1].posted &&
             end.completed - samples[a + 1].posted >= windows[k]) {
        ++a;
      }
      const Sample& from = samples[a];
      if (end.completed < from.posted) continue;
      uint64_t msgs = end.completed - from.posted;
      if (msgs < windows[k]) continue;
      best = std::max(best, GbpsOf(msgs * message_bytes, end.t_ns - from.t_ns));
    }
  }
  return best;
}

}  // namespace gdrbench::agent::bench
