// Regressions of a run against a reference run (its cluster's baseline, or
// the last passing run before it). Per link (src, dst, rail) at the rail's
// verdict size (the run's largest size on that rail; the reference must
// have measured it too): a cell that was OK in the reference regressed when
// it is now below (1 - tolerance) x the reference's value, or now failed.
// Regressed cells are rolled up with the rules of blame
// (controller/analysis/verdicts.h), over the compared cells:
//   rail  most nodes of one rail regressed while another rail has none;
//   node  a node regressed with most of its partners (more than half of its
//         compared cells, at least two) on every rail it has; nodes are
//         accepted worst first and an accepted node's cells stop counting
//         against its partners;
//   nic   as node, on some rails only;
//   link  a regressed cell whose two nodes are not explained above
//         (a<->b when both directions regressed).
// Memory: one rail's compared cells at a time, plus the regressed cells.
// Thread safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::server::history {

// True when `after` dropped past the tolerance below `before`.
bool Dropped(double before, double after, double tolerance);

struct ComparedCell {
  uint32_t src = 0, dst = 0;  // indices into the rail's node names
  float before = 0, after = 0;
  bool now_ok = true;         // false: the cell failed in this run
};

class RegressionBuilder {
 public:
  RegressionBuilder(v1::RegressionReference reference, std::string reference_run_id,
                    double tolerance, size_t max_links = 1000);
  // One rail's compared cells (call once per rail).
  void AddRail(uint32_t rail, uint64_t size_bytes, std::shared_ptr<const std::vector<std::string>> names,
               const std::vector<ComparedCell>& cells);
  v1::RegressionReport Finish();

 private:
  struct RegressedCell {
    uint32_t src, dst;
    float before, after;
  };
  struct NodeTally {
    uint32_t cells = 0, bad = 0;
  };
  struct Rail {
    uint32_t rail = 0;
    uint64_t size_bytes = 0;
    std::shared_ptr<const std::vector<std::string>> names;
    std::vector<NodeTally> tally;   // per node, before acceptance
    std::vector<bool> accepted;     // node regressed on this rail
    uint32_t nodes_tested = 0, nodes_bad = 0;
    std::vector<RegressedCell> regressed;
  };
  v1::RegressionReport report_;
  size_t max_links_;
  std::vector<Rail> rails_;
};

}  // namespace gdrbench::server::history
