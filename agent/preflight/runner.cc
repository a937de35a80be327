#include "agent/preflight/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass: return "PASS";
    case Status::kWarn: return "WARN";
    case Status::kFail: return "FAIL";
    case Status::kSkip: return "SKIP";
  }
  return "?";
}

std::vector<std::string> CheckIds() {
  std::vector<std::string> ids;
  for (const auto& c : AllChecks()) ids.emplace_back(c.id);
  return ids;
}

Status Overall(const std::vector<CheckResult>& checks) {
  Status worst = Status::kPass;
  for (const auto& c : checks) {
    Status s = c.status == Status::kSkip ? Status::kPass : c.status;
    if (static_cast<int>(s) > static_cast<int>(worst)) worst = s;
  }
  return worst;
}

absl::StatusOr<Report> RunPreflight(Context& ctx, const std::vector<std::string>& only) {
  std::vector<std::string> ids = CheckIds();
  for (const auto& want : only) {
    if (std::find(ids.begin(), ids.end(), want) == ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown preflight check '", want,
                                                     "' (known: ", absl::StrJoin(ids, ", "), ")"));
    }
  }
  Report report;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  report.hostname = host;
  report.fs_root = ctx.fs().root();
  int64_t start = NowNs();
  for (const auto& def : AllChecks()) {
    if (!only.empty() && std::find(only.begin(), only.end(), def.id) == only.end()) continue;
    int64_t t0 = NowNs();
    CheckResult r = def.run(ctx);
    r.id = def.id;
    r.duration_ns = NowNs() - t0;
    if (r.status == Status::kPass || r.status == Status::kSkip) r.remediation.clear();
    report.checks.push_back(std::move(r));
  }
  report.duration_ns = NowNs() - start;
  report.overall = Overall(report.checks);
  return report;
}

std::string FormatReport(const Report& report) {
  std::string out;
  size_t width = 0;
  for (const auto& c : report.checks) width = std::max(width, c.id.size());
  for (const auto& c : report.checks) {
    absl::StrAppend(&out, absl::StrFormat("%-4s  %-*s  %s\n", StatusName(c.status),
                                          static_cast<int>(width), c.id, c.summary));
  }
  for (const auto& c : report.checks) {
    if (c.status == Status::kPass || c.status == Status::kSkip) continue;
    absl::StrAppend(&out, "\n", StatusName(c.status), " ", c.id, ": ", c.summary, "\n");
    for (const auto& e : c.evidence) absl::StrAppend(&out, "  ", e.source, ": ", e.observed, "\n");
    if (!c.remediation.empty()) absl::StrAppend(&out, "  fix: ", c.remediation, "\n");
  }
  absl::StrAppend(&out, absl::StrFormat("\noverall %s (%d checks, %.1f ms, root %s)\n",
                                        StatusName(report.overall), report.checks.size(),
                                        report.duration_ns / 1e6, report.fs_root));
  return out;
}

}  // namespace gdrbench::agent::preflight
