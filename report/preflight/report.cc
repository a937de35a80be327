#include "report/preflight/report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace gdrbench::report::preflight {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass: return "PASS";
    case Status::kWarn: return "WARN";
    case Status::kFail: return "FAIL";
    case Status::kSkip: return "SKIP";
  }
  return "?";
}

Status Overall(const std::vector<CheckResult>& checks) {
  Status worst = Status::kPass;
  for (const auto& c : checks) {
    Status s = c.status == Status::kSkip ? Status::kPass : c.status;
    if (static_cast<int>(s) > static_cast<int>(worst)) worst = s;
  }
  return worst;
}

std::string FormatReport(const Report& report, bool verbose) {
  bool live = report.fs_root.empty() || report.fs_root == "/";
  std::string out = absl::StrCat("preflight of ", report.hostname,
                                 live ? "" : absl::StrCat(" (tree ", report.fs_root, ")"), "\n");
  if (!report.captured.empty()) absl::StrAppend(&out, report.captured, "\n");
  out += "\n";
  int width = 5;
  for (const auto& c : report.checks) width = std::max<int>(width, c.id.size());
  absl::StrAppend(&out, absl::StrFormat("%-6s%-*s  %s\n", "", width, "CHECK", "SUMMARY"));
  for (const auto& c : report.checks) {
    absl::StrAppend(&out, absl::StrFormat("%-6s%-*s  %s\n", StatusName(c.status), width, c.id, c.summary));
  }
  int counts[4] = {};
  for (const auto& c : report.checks) {
    ++counts[static_cast<int>(c.status)];
    bool bad = c.status == Status::kWarn || c.status == Status::kFail;
    if (!bad && !verbose) continue;
    absl::StrAppend(&out, "\n", StatusName(c.status), " ", c.id, ": ", c.summary, "\n");
    for (const auto& e : c.evidence) {
      absl::StrAppend(&out, "  ", e.source, ": ", absl::StrReplaceAll(e.observed, {{"\n", "\n    "}}), "\n");
    }
    if (!c.remediation.empty()) absl::StrAppend(&out, "  fix: ", c.remediation, "\n");
  }
  absl::StrAppend(&out, absl::StrFormat("\noverall %s: %d pass, %d warn, %d fail, %d skip in %.1f ms\n",
                                        StatusName(report.overall), counts[static_cast<int>(Status::kPass)],
                                        counts[static_cast<int>(Status::kWarn)],
                                        counts[static_cast<int>(Status::kFail)],
                                        counts[static_cast<int>(Status::kSkip)], report.duration_ns / 1e6));
  return out;
}

}  // namespace gdrbench::report::preflight
