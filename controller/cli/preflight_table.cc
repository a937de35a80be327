#include "controller/cli/preflight_table.h"

#include "report/preflight/report.h"

namespace gdrbench::controller::cli {
namespace {

namespace pf = gdrbench::report::preflight;

pf::Status FromProto(v1::CheckStatus s) {
  switch (s) {
    case v1::CHECK_STATUS_PASS: return pf::Status::kPass;
    case v1::CHECK_STATUS_WARN: return pf::Status::kWarn;
    case v1::CHECK_STATUS_FAIL: return pf::Status::kFail;
    default: return pf::Status::kSkip;
  }
}

pf::Report FromProto(const v1::PreflightReport& in) {
  pf::Report out;
  out.hostname = in.hostname();
  out.fs_root = in.fs_root();
  out.overall = FromProto(in.overall());
  out.duration_ns = in.duration_ns();
  for (const auto& c : in.checks()) {
    pf::CheckResult r;
    r.id = c.id();
    r.status = FromProto(c.status());
    r.summary = c.summary();
    r.remediation = c.remediation();
    r.duration_ns = c.duration_ns();
    for (const auto& e : c.evidence()) r.Saw(e.source(), e.observed());
    out.checks.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string FormatPreflight(const v1::PreflightReport& report, bool verbose) {
  return pf::FormatReport(FromProto(report), verbose);
}

}  // namespace gdrbench::controller::cli
