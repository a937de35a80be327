// What a preflight run produces: one result per check and the report that
// carries them, plus the one plain-text rendering of a report (used by
// `gdrbench-agent preflight`, `gdrbench-preflight` and `gdrbench preflight`).
// The v1 PreflightReport carries the same fields (agent/service converts).
//
// This library (report/preflight, gdrbench_report_preflight) depends on
// abseil only: the agent's checks fill it (agent/preflight names these types
// in its own namespace, results.h), gdrbench-preflight builds it without gRPC
// (the gpu preset), and the controller renders a report it received without
// linking the agent's libraries.
// Thread safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gdrbench::report::preflight {

// Ordered by severity; SKIP ranks with PASS when a report is summarised.
enum class Status { kPass, kSkip, kWarn, kFail };

// "PASS", "WARN", "FAIL", "SKIP".
const char* StatusName(Status s);

// One thing a check read, and where.
struct Evidence {
  std::string source;    // "/sys/module/nvidia_peermem", "ibv_query_port(mlx5_0, 1)"
  std::string observed;  // what was found there
};

struct CheckResult {
  std::string id;
  Status status = Status::kSkip;
  std::string summary;      // one sentence
  std::vector<Evidence> evidence;
  std::string remediation;  // the command or setting that fixes it; empty on PASS and SKIP
  int64_t duration_ns = 0;

  CheckResult& Saw(std::string source, std::string observed) {
    evidence.push_back(Evidence{std::move(source), std::move(observed)});
    return *this;
  }
};

struct Report {
  std::string hostname;
  std::string fs_root;  // "/" live; the tree or tarball offline
  // Offline: when, where and by which agent the tree was captured
  // (capture.h's CaptureInfo); empty live.
  std::string captured;
  std::vector<CheckResult> checks;
  Status overall = Status::kPass;  // the worst status, SKIP counted as PASS
  int64_t duration_ns = 0;
};

// The worst status of `checks` (SKIP ranks as PASS).
Status Overall(const std::vector<CheckResult>& checks);

// A plain-text table: a header naming the host (and the tree offline), one
// line per check (status, id, summary), then the evidence and the fix of
// every WARN/FAIL check (of every check with `verbose`), then a count line:
//   "overall FAIL: 12 pass, 2 warn, 1 fail, 3 skip in 17.5 ms".
// Multi-line evidence (the topology matrix) is indented under its source.
std::string FormatReport(const Report& report, bool verbose = false);

}  // namespace gdrbench::report::preflight
