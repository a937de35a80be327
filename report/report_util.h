// Helpers for describing a run in words: names, escapes, node rows, the
// verdict matrices and a cell index. Shared by the controller's reports
// (controller/report), its CLI and gdrbench-server's pages.
// Pure functions of the run; thread-safe.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/string_view.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::report {

std::string HtmlEscape(absl::string_view s);
std::string XmlEscape(absl::string_view s);
std::string CsvField(absl::string_view s);
std::string StatusName(v1::ResultStatus s);   // "ok", "failed", "error", "skipped", ""
std::string SizeName(uint64_t bytes);         // "64 KiB"
// A verdict matrix's size for a title: "64 KiB", or "no size measured" for
// the size-0 matrix of a rail whose every test failed before its first size
// (a title saying "0 B" reads like a measurement).
std::string MatrixSizeName(const v1::BandwidthMatrix& m);

// What memory the run's tests really used, from each test's endpoints (what
// the agents answered, not what was asked): "memory: host (ibv_reg_mr) on
// all 12 tests; GPU path not tested: host memory" or "memory: gpu
// (ibv_reg_dmabuf_mr) on 10 tests, host (ibv_reg_mr) on 2". Without pair
// results (a run kept without them) it says what was asked.
std::string TestedMemory(const v1::Run& run);

// Bidirectional runs: whether both directions of each test ran every size
// together (SweepSummary.sizes_in_lockstep): "both directions of all 6
// bidirectional tests in lock-step ..." or "2 of 6 bidirectional tests NOT
// in lock-step ...: a<->b rail 0, ...". Empty for a one-direction run or one
// without OK bidirectional pair results (nothing to say either way).
std::string LockstepNote(const v1::Run& run);

// The run's nodes as a report shows them: the inventory's name, the agent's
// host, versions and HCA firmware, the preflight's overall status. From
// Run.preflight[i] and Run.nodes[i] (inventory node i, sweep.h).
struct NodeRow {
  std::string name, host, kernel, driver, cuda, rdma, firmware, preflight;
};
std::vector<NodeRow> NodeRows(const v1::Run& run);

// One endpoint's memory as used: "gpu (ibv_reg_dmabuf_mr)", or the spec asked
// for when the agent did not say.
std::string MemoryUsed(const v1::Endpoint& e);
std::string Gbps(double v);                   // "%.3g"
std::string RegressionKindName(v1::RegressionKind k);       // "link", "node", "nic", "rail"
std::string RegressionReferenceName(v1::RegressionReference r);  // "the baseline", "the last passing run"

// The verdict-size matrix of each lane (the largest size of a rail, or of a
// (rail, dst rail) pair in cross-rail runs), in (rail, dst rail) order.
std::vector<const v1::BandwidthMatrix*> VerdictMatrices(const v1::Run& run);

// "Rail 2", or "Rail 0->1" (a cross-rail lane: initiators' rail -> targets').
std::string LaneTitle(const v1::BandwidthMatrix& m);

// Looks up a cell of a run's matrices by node names, lane (rail and the
// target's rail: `rail` but in cross-rail runs) and size.
class CellIndex {
 public:
  explicit CellIndex(const v1::Run& run);
  // nullptr when absent.
  const v1::MatrixCell* Find(const std::string& src, const std::string& dst, uint32_t rail, uint32_t dst_rail,
                             uint64_t size) const;
  // The verdict-size cell of (src, dst, lane), nullptr when absent.
  const v1::MatrixCell* FindVerdict(const std::string& src, const std::string& dst, uint32_t rail,
                                    uint32_t dst_rail) const;

 private:
  // Keys: LaneKey.
  std::map<std::tuple<std::string, std::string, uint64_t, uint64_t>, const v1::MatrixCell*> cells_;
  std::map<uint64_t, uint64_t> verdict_size_;
};

// Preflight checks that did not pass, per node: "id: summary -> remedy".
std::map<std::string, std::vector<std::string>> PreflightProblems(const v1::Run& run);

}  // namespace gdrbench::report
