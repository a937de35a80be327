// Each link's own noise, from its history (issue 29, item 1). Per
// (cluster, rail, size) the server keeps, for every link (src, dst node ids),
// a bounded window of its recent passing readings (BW average, Gb/s), oldest
// first, and how many readings it has ever taken. A link's summary is the
// window's median and its noise: 1.4826 x MAD / median (the median absolute
// deviation scaled to a standard deviation for normal readings, relative to
// the median), robust to the odd slow run.
//
// A reading is passing when its cell completed OK, was not judged low or
// failed, and did not regress against the link's own history: a link that
// degrades does not teach its history the degraded value (the baseline, which
// a user pins, is the way to accept a new normal).
//
// The comparison (regressions.h) reads, per cell: the median as the history
// reference (only with at least NoisePolicy::min_history readings; fewer:
// "N runs of history: compared with the baseline only") and the noise, so a
// regression is a drop past max(tolerance, k x noise).
//
// Memory: one matrix's windows (links x window floats). Thread safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gdrbench::server::history {

struct NoisePolicy {
  double k = 3;              // a regression is a drop past max(tolerance, k x noise)
  uint32_t min_history = 5;  // readings before a link's history is a reference
  uint32_t window = 10;      // readings kept per link (1 to kMaxNoiseWindow)
};
inline constexpr uint32_t kMaxNoiseWindow = 64;

// INVALID_ARGUMENT naming the field when k is not finite and >= 0, window is
// not 1..kMaxNoiseWindow or min_history is not 1..window.
absl::Status ValidateNoisePolicy(const NoisePolicy& p);

struct LinkSummary {
  uint32_t history = 0;  // readings in the window
  double median = 0;     // Gb/s; 0 when history is 0
  double noise = 0;      // 1.4826 x MAD / median; 0 when history < 2
};

// The summary of readings (any order). Empty: history 0.
LinkSummary Summarize(std::vector<float> readings);

// The regression threshold of a link: max(tolerance, k x noise) when it has
// min_history readings, else the tolerance.
double Threshold(const LinkSummary& s, double tolerance, const NoisePolicy& p);

class LinkNoiseTable {
 public:
  using Key = std::pair<int64_t, int64_t>;  // (src, dst) node ids
  explicit LinkNoiseTable(uint32_t window) : window_(window) {}

  // The table encoded by Encode. DATA_LOSS when the bytes are not one.
  // A table kept with another window is read and re-windowed (the newest
  // readings kept).
  static absl::StatusOr<LinkNoiseTable> Decode(std::string_view bytes, uint32_t window);
  std::string Encode() const;

  // The link's summary (history 0 when the link is unknown), as of the last
  // Decode or Settle; O(log links).
  LinkSummary Find(Key link) const;
  // Appends a passing reading (dropping the oldest past the window). The
  // table stays sorted; adding many readings then calling Find is
  // O(log n) per call after Settle().
  void Add(Key link, float gbps);
  // Merges readings added since the last Settle into the sorted table.
  void Settle();
  // What Settle then Encode would give, without settling (no new table, no
  // summaries): for a table about to be stored and dropped. The table keeps
  // its readings added since the last Settle (sorted now, still pending).
  std::string EncodeWithPending();
  // Room for `readings` Adds before the next Settle.
  void Reserve(size_t readings) { pending_.reserve(readings); }
  size_t links() const { return keys_.size(); }
  // Every link, sorted, as of the last Decode or Settle.
  const std::vector<Key>& Keys() const { return keys_; }
  std::vector<float> Window(Key link) const;  // oldest first; empty when unknown

 private:
  int Index(Key link) const;  // -1 when absent
  void Summarize();            // summaries_ from values_
  // Sorts pending_ and calls emit(key, readings, count) for every link of
  // the table with its pending readings merged in, in key order.
  template <typename Emit>
  void Merge(Emit emit);
  uint32_t window_;
  std::vector<Key> keys_;          // sorted
  std::vector<uint8_t> filled_;    // readings per link
  std::vector<float> values_;      // keys_.size() x window_, oldest first
  std::vector<LinkSummary> summaries_;  // per key
  std::vector<std::pair<Key, float>> pending_;
};

}  // namespace gdrbench::server::history
