// Regressions of a run against a reference: its cluster's baseline run, or
// each link's own history (link_noise.h: the median of its recent passing
// readings; older runs: the last passing run). Per link (src, dst, rail) at
// the rail's verdict size (the run's largest size on that rail; the reference
// must have measured it too): a cell that was OK in the reference regressed
// when it is now below (1 - threshold) x the reference's value, or now
// failed. The threshold is the tolerance, or max(tolerance, k x the link's
// noise) once the link has NoisePolicy::min_history readings of history.
// Regressed cells are rolled up with the rules of blame
// (controller/analysis/verdicts.h), over the compared cells:
//   rail  most nodes of one rail regressed while another rail has none;
//   node  a node regressed with most of its partners (more than half of its
//         compared cells, with at least two partners, each cell past its
//         own link's noise) on every rail it has; nodes are
//         accepted worst first and an accepted node's cells stop counting
//         against its partners;
//   nic   as node, on some rails only;
//   link  a regressed cell whose two nodes are not explained above
//         (a<->b when both directions regressed).
// Confirmation: a finding is "confirmed by a retest" (Regression.confirmed)
// when every regressed cell behind it was retested in its run
// (MatrixCell.retested: it read low or regressed, was measured again, and
// the stored reading, the retest's, regressed too); otherwise "seen once".
// Its reason ends with which.
// Memory: one rail's compared cells at a time, plus the regressed cells.
// Thread safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"
#include "server/history/link_noise.h"

namespace gdrbench::server::history {

// True when `after` dropped past the tolerance below `before`.
bool Dropped(double before, double after, double tolerance);

struct ComparedCell {
  uint32_t src = 0, dst = 0;  // indices into the rail's node names
  float before = 0, after = 0;
  bool now_ok = true;         // false: the cell failed in this run
  float noise = 0;            // the link's noise (link_noise.h); 0 unknown
  uint32_t history = 0;       // readings in the link's history
  bool retested = false;      // MatrixCell.retested: this reading is a retest's
};

class RegressionBuilder {
 public:
  RegressionBuilder(v1::RegressionReference reference, std::string reference_run_id,
                    double tolerance, size_t max_links = 1000);
  // Per-link thresholds (default: NoisePolicy{}). Call before AddRail.
  void SetNoise(const NoisePolicy& noise);
  // REGRESSION_REFERENCE_HISTORY: a cell whose link has `history` readings,
  // fewer than min_history, left to the baseline (counted, not compared).
  void CountShortHistory(uint32_t history);
  // One rail's compared cells (call once per rail).
  void AddRail(uint32_t rail, uint64_t size_bytes, std::shared_ptr<const std::vector<std::string>> names,
               const std::vector<ComparedCell>& cells);
  v1::RegressionReport Finish();

 private:
  struct RegressedCell {
    uint32_t src, dst;
    float before, after;
    float threshold, noise;
    uint32_t history;
    bool retested;
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
  double CellThreshold(const ComparedCell& c) const;
  void AcceptNodes(Rail& r, const std::vector<ComparedCell>& cells, const std::vector<bool>& bad,
                   const std::vector<std::vector<uint32_t>>& touching);
  // Finish's steps: one finding; the rails' findings (returns those rails);
  // the nodes' and NICs' findings off those rails (returns the (node, rail)
  // pairs they explain); then AddLinks.
  v1::Regression* AddFinding(v1::RegressionKind kind, std::string subject, const std::vector<float>& before,
                             const std::vector<float>& after, uint32_t rail, uint64_t size,
                             std::string reason);
  std::set<uint32_t> AddRailFindings();
  std::set<std::pair<std::string, uint32_t>> AddNodeFindings(const std::set<uint32_t>& bad_rails);
  // `node`'s regressed cells on rails_[k] (before, after) and the cells it
  // was compared on there.
  void CollectNodeCells(size_t k, const std::string& node, std::vector<float>* before,
                        std::vector<float>* after, uint32_t* cells,
                        bool* retested) const;
  void AddLinks(const std::set<uint32_t>& bad_rails,
                const std::set<std::pair<std::string, uint32_t>>& explained);
  std::string ReferenceDetail() const;
  void Summarize();
  v1::RegressionReport report_;
  NoisePolicy noise_;
  size_t max_links_;
  std::vector<Rail> rails_;
};

}  // namespace gdrbench::server::history
