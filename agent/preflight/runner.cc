#include "agent/preflight/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
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

std::vector<std::string> CheckIds() {
  std::vector<std::string> ids;
  for (const auto& c : AllChecks()) ids.emplace_back(c.id);
  return ids;
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

}  // namespace gdrbench::agent::preflight
