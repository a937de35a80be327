// Capacity statistics of one stored run, computed at ingest from each rail's
// verdict-size matrix (the largest size, the one judged) as its cells arrive:
// per rail and per topology group (capacity.proto's CapacityGroup.group:
// intra-leaf, cross-leaf, each leaf and its uplinks, spine groups) a
// histogram of delivered Gb/s, and the rail's weakest OK cells. The capacity
// report (capacity_report.h) adds these up over a period; it never rereads
// the cells.
// Memory: a histogram per group (~15 KB), a heap of the weakest cells.
// Thread safety: none (one builder per matrix, one ingest thread).
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "gdrbench/v1/capacity.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::server::history {

// Histogram bins: bin b covers [kHistBase * kHistStep^b, kHistBase * kHistStep^(b+1)).
inline constexpr double kHistBase = 0.001;  // Gb/s
inline constexpr double kHistStep = 1.01;
inline constexpr uint32_t kHistBins = 1852;  // up to 100000 Gb/s
uint32_t HistBin(double gbps);
double HistBinLow(uint32_t bin);
// The q-quantile (0..1) of a histogram given as ascending (bin, count) pairs,
// clamped to [min, max]: the geometric middle of its bin.
double HistQuantile(const std::vector<uint32_t>& bins, const std::vector<uint64_t>& counts, double q,
                    double min, double max);

// The leaf and spine group of every node of a matrix on one rail, from the
// run's topology labels ("" where a node has none).
struct RailLabels {
  std::vector<std::string> leaf;
  std::vector<std::string> spine_group;
  bool any = false;
};
RailLabels LabelsOf(const v1::Run& run, uint32_t rail, const std::vector<std::string>& nodes);

class CapacityBuilder {
 public:
  CapacityBuilder(uint32_t rail, uint64_t size_bytes, std::vector<std::string> nodes, RailLabels labels,
                  size_t keep_weakest);
  // src/dst index `nodes`; link_gbps 0 = unknown.
  void Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps, double link_gbps);
  // Appends the groups (those with cells) and the weakest cells to `out`.
  void Finish(v1::RunCapacity* out);

 private:
  struct Acc {
    std::string name;
    uint64_t ok = 0, failed = 0;
    double min = 0, max = 0, sum = 0, link = 0;
    std::vector<uint64_t> hist;  // dense, allocated on the first OK cell
  };
  struct Weak {
    double key;  // fraction of the link rate (or Gb/s when unknown): smaller is weaker
    uint32_t src, dst;
    float gbps, link;
    bool operator<(const Weak& o) const { return key < o.key; }  // max-heap: the strongest on top
  };
  void Count(Acc& a, bool ok, double gbps, double link);
  Acc& Group(size_t index, const std::string& name);

  uint32_t rail_;
  uint64_t size_bytes_;
  std::vector<std::string> nodes_;
  RailLabels labels_;
  std::vector<int> leaf_id_, spine_id_;  // per node; -1 = unlabelled
  std::vector<std::string> leaf_names_, spine_names_;
  std::vector<Acc> groups_;
  size_t keep_;
  std::priority_queue<Weak> weakest_;
};

}  // namespace gdrbench::server::history
