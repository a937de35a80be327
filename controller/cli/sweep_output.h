// Internal to `gdrbench sweep`: printing the plan and the progress, writing
// the reports of a run held as a StreamedRun.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "controller/run/plan.h"
#include "controller/run/runner.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/streamed_run.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::cli {

// The plan as JSON: every round with its pairs and rails, and the estimated
// duration with its `basis` (where the per-test cost comes from). Streams to
// `out` (works for any inventory size). The text plan: dry_run_text.h.
void PrintPlanJson(const run::Plan& plan, const schedule::EstimateParams& est, const std::string& basis,
                   std::FILE* out);

std::string JsonEscape(const std::string& s);

// A run of at most this many matrix cells is made whole in memory for the
// reports that read every cell and pair (pairs.csv, summary.md, report.html,
// junit.xml, the text matrix on stdout): about 1 KB a cell with its share of
// the pairs, so 500 MB at most. 524,288 cells: all-pairs of 181 nodes x 8
// rails x 2 sizes, 128 nodes with room to spare.
inline constexpr size_t kWholeReportMaxCells = size_t{1} << 19;

// The reports of a sweep into `dir`: run.json always, streamed (the
// matrices' cells chunk by chunk, the pairs read back from the journal: the
// bytes report::RenderJson renders of the whole run); when the run has at
// most `max_whole_cells` cells (or is held whole), every report
// (report::WriteReports). A larger run gets run.json alone and one line on
// stderr saying which reports were not written and why. Returns the paths
// written; errors as report::WriteReports.
absl::StatusOr<std::vector<std::string>> WriteSweepReports(const sweep::StreamedRun& run,
                                                           const std::string& dir,
                                                           size_t max_whole_cells = kWholeReportMaxCells);

// The most rails any node of the plan has.
size_t RailCount(const run::Plan& plan);

// Renders runner progress: a bar with ETA (kBar, a terminal), one readable
// line per finished test (kLines: logs, cron, tee, the lab's console), or
// JSON lines (kJson, only when asked). Bar and JSON at most every `interval`
// plus the last one. Not thread-safe (the sweep serializes its hooks).
class ProgressPrinter {
 public:
  enum class Style { kBar, kLines, kJson, kNone };
  ProgressPrinter(Style style, std::FILE* out, std::chrono::milliseconds interval)
      : style_(style), out_(out), interval_(interval) {}
  void Update(const run::Progress& p);
  // kLines: "[ 3/12] node1 -> node4 rail 0: 0.152 Gb/s at 1 MiB, OK, ETA 1:40"
  // (the largest size measured; a failed test says why).
  void Result(const v1::PairResult& result);
  void Finish();

 private:
  Style style_;
  std::FILE* out_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool drew_ = false;
  run::Progress latest_;
  size_t results_ = 0;
};

// One finished test as a line (no counters): "node1 -> node4 rail 0:
// 0.152 Gb/s at 1 MiB, OK" or "node1 -> node3 rail 0: FAILED: <reason>".
std::string ResultLine(const v1::PairResult& result);

}  // namespace gdrbench::controller::cli
