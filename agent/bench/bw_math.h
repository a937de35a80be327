// Bandwidth maths with perftest's semantics, as tiny pure functions.
//   BW average = bytes / (last completion - first post)     (perftest's)
//   BW peak    = the best bounded interval (see PeakGbps): perftest's bound,
//                taken per poll instead of per WR
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
  uint64_t completed = 0;  // messages completed by t_ns
  uint64_t posted = 0;     // messages posted before t_ns was read
};

// bytes * 8 / ns is bits per nanosecond, which is Gb/s (10^9 bit/s). 0 when
// the interval is not positive.
double GbpsOf(uint64_t bytes, int64_t ns);
// Messages per microsecond = millions of messages per second.
double MppsOf(uint64_t messages, int64_t ns);

// The best rate over an interval [a, b] between two samples, counting only
// the messages that were both posted after a and completed by b
// (samples[b].completed - samples[a].posted): every one of them crossed the
// wire inside the interval, so no interval can report more than the wire
// carried, however completions were batched by the poller (a stalled poll
// reaps a backlog in several batches a few hundred ns apart; counting
// completed - completed there reports many times the wire). This is
// perftest's peak bound (WRs i..j over tcompleted[j] - tposted[i], the
// minimum per WR) taken at poll granularity; unlike perftest it is not
// switched off above 20,000 iterations or in duration mode.
//
// For each end b, the start a is the latest sample leaving at least
// min_messages * 2^k such messages, for every k while that fits: O(n log n),
// and within a factor (1 + pipeline / window) of the best interval. Callers
// pass the pipeline depth (tx depth x QPs, capped by the total) as
// min_messages. Returns 0 when no interval qualifies; samples in time order,
// `completed` and `posted` non-decreasing.
double PeakGbps(const std::vector<Sample>& samples, size_t count, uint64_t message_bytes,
                uint64_t min_messages);

}  // namespace gdrbench::agent::bench
