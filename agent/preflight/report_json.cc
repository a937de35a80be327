#include "agent/preflight/report_json.h"

#include "nlohmann/json.hpp"

namespace gdrbench::agent::preflight {
namespace {

// v1.CheckStatus's names (proto/gdrbench/v1/preflight.proto).
const char* ProtoStatusName(Status s) {
  switch (s) {
    case Status::kPass: return "CHECK_STATUS_PASS";
    case Status::kWarn: return "CHECK_STATUS_WARN";
    case Status::kFail: return "CHECK_STATUS_FAIL";
    case Status::kSkip: return "CHECK_STATUS_SKIP";
  }
  return "CHECK_STATUS_UNSPECIFIED";
}

// proto3's JSON mapping: a field at its default value is not printed.
void Put(nlohmann::ordered_json& o, const char* key, const std::string& v) {
  if (!v.empty()) o[key] = v;
}
void PutInt64(nlohmann::ordered_json& o, const char* key, int64_t v) {
  if (v != 0) o[key] = std::to_string(v);  // int64 is a JSON string
}

nlohmann::ordered_json CheckJson(const CheckResult& c) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  Put(o, "id", c.id);
  o["status"] = ProtoStatusName(c.status);
  Put(o, "summary", c.summary);
  if (!c.evidence.empty()) {
    nlohmann::ordered_json ev = nlohmann::ordered_json::array();
    for (const auto& e : c.evidence) {
      nlohmann::ordered_json x = nlohmann::ordered_json::object();
      Put(x, "source", e.source);
      Put(x, "observed", e.observed);
      ev.push_back(std::move(x));
    }
    o["evidence"] = std::move(ev);
  }
  Put(o, "remediation", c.remediation);
  PutInt64(o, "duration_ns", c.duration_ns);
  return o;
}

}  // namespace

std::string ReportJson(const Report& report) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  Put(o, "hostname", report.hostname);
  if (!report.checks.empty()) {
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& c : report.checks) checks.push_back(CheckJson(c));
    o["checks"] = std::move(checks);
  }
  o["overall"] = ProtoStatusName(report.overall);
  PutInt64(o, "duration_ns", report.duration_ns);
  Put(o, "fs_root", report.fs_root);
  // Invalid UTF-8 (a file's bytes quoted as evidence) is replaced, not thrown.
  return o.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gdrbench::agent::preflight
