// Verdicts and blame over a MatrixSet.
//
// Verdicts are reached on each rail's largest message size (small sizes are
// latency-bound and never at line rate); other sizes are informational.
// A cell is:
//   fail  the test did not complete OK (status FAILED/ERROR/SKIPPED);
//   low   absolute: below min_fraction_of_link x the slower port's link rate;
//         fleet-relative: below exp(ref - mad_k x MAD) on a log scale and
//           more than fleet_min_drop below the fleet median
//         (deviations are ratios), where ref is the median of the per-node
//         medians of ln(Gb/s) of the rail's OK cells (robust to one bad node
//         even in a 4-node fleet, where it is in half the cells) and MAD is
//         the median |ln(cell) - ref| over cells between non-outlier nodes
//         (floored at 1 % so a perfectly uniform fleet does not flag noise); baseline: below (1 - baseline_tolerance) x the
//         baseline run's value for the same src, dst, rail and size.
//         A check is off when its parameter is 0 (or no baseline is given).
//   pass  otherwise.
// Blame, per rail, from the bad (low or fail) verdict cells:
//   rail  most nodes of one rail have a bad majority while another rail is fine;
//   node  a node is bad with most of its partners on every rail it has
//         ("most" = more than half of its tested cells, rows and columns);
//   nic   as node, but on some rails only: that node's NIC of the rail;
//   link  a bad cell whose two nodes are not blamed themselves (a<->b when
//         both directions are bad).
// Thread safety: none (mutates the matrices' verdicts).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

v1::VerdictPolicy DefaultPolicy();  // 0.9 of link, k = 3, 5 %

// Bandwidth values of a previous run, looked up by node names.
class Baseline {
 public:
  // From a run's matrices. INVALID_ARGUMENT when it has none.
  static absl::StatusOr<Baseline> FromRun(const v1::Run& run);
  // 0 when the baseline has no OK value there.
  double Get(const std::string& src, const std::string& dst, uint32_t rail, uint64_t size) const;
  size_t size() const { return values_.size(); }

 private:
  std::map<std::tuple<std::string, std::string, uint32_t, uint64_t>, double> values_;
};

struct Outcome {
  std::vector<v1::Blame> blame;
  bool passed = false;
  std::string summary;        // one line
  size_t cells = 0, pass = 0, low = 0, fail = 0;
};

// Sets every verdict-size cell's verdict and reason, then blames.
// `excluded` lists the nodes left out (their cells are SKIPPED -> fail).
Outcome Judge(MatrixSet& matrices, const v1::VerdictPolicy& policy, const Baseline* baseline,
              const std::vector<std::string>& excluded);

}  // namespace gdrbench::controller::analysis

namespace gdrbench::controller::analysis {

// Copies the matrices (all sizes), blame, pass/fail and summary into `run`.
void FillRun(MatrixSet& matrices, const Outcome& outcome, v1::Run* run);

}  // namespace gdrbench::controller::analysis
