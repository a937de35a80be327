#include "controller/cli/preflight_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gdrbench::controller::cli {

const char* CheckStatusName(v1::CheckStatus status) {
  switch (status) {
    case v1::CHECK_STATUS_PASS: return "PASS";
    case v1::CHECK_STATUS_WARN: return "WARN";
    case v1::CHECK_STATUS_FAIL: return "FAIL";
    case v1::CHECK_STATUS_SKIP: return "SKIP";
    default: return "?";
  }
}

std::string FormatPreflight(const v1::PreflightReport& report, bool verbose) {
  std::string out = absl::StrCat("preflight of ", report.hostname(),
                                 report.fs_root() == "/" || report.fs_root().empty()
                                     ? ""
                                     : absl::StrCat(" (tree ", report.fs_root(), ")"),
                                 "\n\n");
  int width = 2;
  for (const auto& c : report.checks()) width = std::max<int>(width, c.id().size());
  absl::StrAppend(&out, absl::StrFormat("%-6s%-*s  %s\n", "", width, "CHECK", "SUMMARY"));
  for (const auto& c : report.checks()) {
    absl::StrAppend(&out, absl::StrFormat("%-6s%-*s  %s\n", CheckStatusName(c.status()), width,
                                          c.id(), c.summary()));
  }
  for (const auto& c : report.checks()) {
    bool bad = c.status() == v1::CHECK_STATUS_FAIL || c.status() == v1::CHECK_STATUS_WARN;
    if (!bad && !verbose) continue;
    absl::StrAppend(&out, "\n", CheckStatusName(c.status()), " ", c.id(), ": ", c.summary(), "\n");
    for (const auto& e : c.evidence()) {
      std::string observed = e.observed();
      // Multi-line evidence (the topology matrix) is indented under its source.
      for (size_t pos = 0; (pos = observed.find('\n', pos)) != std::string::npos; pos += 5) {
        observed.replace(pos, 1, "\n    ");
      }
      absl::StrAppend(&out, "  ", e.source(), ": ", observed, "\n");
    }
    if (!c.remediation().empty()) absl::StrAppend(&out, "  fix: ", c.remediation(), "\n");
  }
  int counts[5] = {};
  for (const auto& c : report.checks()) {
    if (c.status() >= 0 && c.status() < 5) ++counts[c.status()];
  }
  absl::StrAppend(&out, absl::StrFormat(
                            "\noverall %s: %d pass, %d warn, %d fail, %d skip in %.1f ms\n",
                            CheckStatusName(report.overall()), counts[v1::CHECK_STATUS_PASS],
                            counts[v1::CHECK_STATUS_WARN], counts[v1::CHECK_STATUS_FAIL],
                            counts[v1::CHECK_STATUS_SKIP], report.duration_ns() / 1e6));
  return out;
}

}  // namespace gdrbench::controller::cli
