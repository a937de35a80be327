// Bandwidth maths with perftest's semantics, as tiny pure functions.
//   BW average = bytes / (last completion - first post)
//   BW peak    = the best interval (see PeakGbps)
//   Gb/s       = 10^9 bit/s;  MsgRate in 10^6 messages/s.
// Thread-safe: no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdrbench::agent::bench {

// A completion event of the write loop: the clock after a poll that returned
// completions, and the messages completed so far (all QPs).
struct Sample {
  int64_t t_ns = 0;
  uint64_t completed = 0;
};

// bytes * 8 / ns is bits per nanosecond, which is Gb/s (10^9 bit/s). 0 when
// the interval is not positive.
double GbpsOf(uint64_t bytes, int64_t ns);
// Messages per microsecond = millions of messages per second.
double MppsOf(uint64_t messages, int64_t ns);

// The best rate over any interval between two points of `samples` (the
// first point may be the first post, with completed = 0) that spans at least
// `min_messages` messages. A window shorter than the send pipeline measures
// how completions were batched by the poll, not the wire, so callers pass
// the pipeline depth (tx depth x QPs, capped by the total). Returns 0 when no
// interval qualifies. O(n), samples in time order.
double PeakGbps(const std::vector<Sample>& samples, size_t count, uint64_t message_bytes,
                uint64_t min_messages);

}  // namespace gdrbench::agent::bench
