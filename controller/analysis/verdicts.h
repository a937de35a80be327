// Verdicts over a MatrixSet, in steps that are each tested on their own:
//   1. ComputeFleetReference  per verdict matrix: the fleet's reference and spread;
//   2. AbsoluteVerdict, FleetVerdict, BaselineVerdict  why one cell is low by
//      each check ("" when it passes that check or the check is off);
//   3. JudgeMatrix            every cell's verdict and reason, counted;
//   4. Blame (blame.h)        who is to blame for the bad cells;
//   5. Summarize              passed or not, and the one-line summary.
// Judge runs them all.
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
//         (floored at 1 % so a perfectly uniform fleet does not flag noise);
//         baseline: below (1 - baseline_tolerance) x the baseline run's
//         value for the same src, dst, rail and size.
//         A check is off when its parameter is 0 (or no baseline is given).
//   pass  otherwise.
// Thread safety: none (JudgeMatrix and Judge mutate the matrices' verdicts).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

// 0.9 of link, k = 3, 10 % fleet drop, 5 % baseline, gpu >= 0.8 x host; link
// counters: 0.1 % retransmissions (link_flags.h). The one home of these defaults.
v1::VerdictPolicy DefaultPolicy();

// Bandwidth values of a previous run, looked up by node names.
class Baseline {
 public:
  // From a run's matrices. INVALID_ARGUMENT when it has none.
  static absl::StatusOr<Baseline> FromRun(const v1::Run& run);
  // 0 when the baseline has no OK value there. `dst_rail`: the target's
  // rail (`rail` but in cross-rail runs; a lane is compared only with itself).
  double Get(const std::string& src, const std::string& dst, uint32_t rail, uint32_t dst_rail,
             uint64_t size) const;
  size_t size() const { return values_.size(); }

 private:
  std::map<std::tuple<std::string, std::string, uint64_t, uint64_t>, double> values_;  // key: LaneKey
};

// Step 1: the fleet-relative reference of one matrix (its OK cells).
struct FleetReference {
  double median_gbps = 0;   // exp(ref), the fleet's reference bandwidth
  double mad = 0.01;        // the log-scale spread, at least 0.01
  double floor_gbps = -1;   // cells below it are low; -1: the check is off
                            // (mad_k 0, or fewer than 3 OK cells)
  size_t ok_cells = 0;
};
FleetReference ComputeFleetReference(const Matrix& m, const v1::VerdictPolicy& policy);

// Step 2: why an OK cell is low by one check; "" = not low by it.
std::string AbsoluteVerdict(const Cell& cell, const v1::VerdictPolicy& policy);
std::string FleetVerdict(const Cell& cell, const FleetReference& fleet,
                         const v1::VerdictPolicy& policy);
// `baseline_gbps` 0 = the baseline has no value for this cell.
std::string BaselineVerdict(const Cell& cell, double baseline_gbps, const v1::VerdictPolicy& policy);

struct CellCounts {
  size_t cells = 0, pass = 0, low = 0, fail = 0;
  size_t skipped = 0;  // status SKIPPED (a node left out): no verdict, not failed
};

// Step 3: sets the verdict of every present cell of `m` (fail for a status
// other than OK; low with the checks' reasons joined by "; "; else pass),
// its baseline value when a baseline is given, and drops the reason of a
// passing cell (left from before an outlier retest). `names` are the
// matrix's nodes (baseline lookups).
CellCounts JudgeMatrix(Matrix& m, const std::vector<std::string>& names,
                       const v1::VerdictPolicy& policy, const Baseline* baseline);

struct Outcome {
  std::vector<v1::Blame> blame;
  bool passed = false;
  std::string summary;        // one line
  size_t cells = 0, pass = 0, low = 0, fail = 0, skipped = 0;
  // --memory lists (gdr.h): the later kinds' halves, those not OK, and the
  // pairs blamed on the GPU path; each fails the run.
  size_t memory_halves_bad = 0, gdr_pairs = 0;
};

// Step 5: passed = some cell, none low, failed or skipped, no node left
// out, no memory half failed and no pair blamed on its GPU path (gdr.h). The summary: "PASS: 12/12 cells pass" or "FAIL: 10/12 cells pass;
// 1 low, 1 failed, 2 skipped, 1 node(s) left out (n3); blame: link a->b,
// ..." (at most 8 named of each). `excluded`: "NAME: reason" per node.
void Summarize(const std::vector<std::string>& excluded, Outcome* outcome);

// All steps: verdicts on every verdict matrix, blame, summary.
// `excluded` lists the nodes left out (their cells are SKIPPED -> fail).
Outcome Judge(MatrixSet& matrices, const v1::VerdictPolicy& policy, const Baseline* baseline,
              const std::vector<std::string>& excluded);

// Copies the matrices (all sizes), blame, pass/fail and summary into `run`.
// with_cells = false: the matrices without their cells (ToProto), for a run
// whose cells are rendered from `matrices` chunk by chunk.
void FillRun(MatrixSet& matrices, const Outcome& outcome, v1::Run* run, bool with_cells = true);

}  // namespace gdrbench::controller::analysis
