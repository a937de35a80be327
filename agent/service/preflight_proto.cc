#include "agent/service/preflight_proto.h"

namespace gdrbench::agent::service {

v1::CheckStatus ToProto(preflight::Status status) {
  switch (status) {
    case preflight::Status::kPass: return v1::CHECK_STATUS_PASS;
    case preflight::Status::kWarn: return v1::CHECK_STATUS_WARN;
    case preflight::Status::kFail: return v1::CHECK_STATUS_FAIL;
    case preflight::Status::kSkip: return v1::CHECK_STATUS_SKIP;
  }
  return v1::CHECK_STATUS_UNSPECIFIED;
}

v1::PreflightReport ToProto(const preflight::Report& report) {
  v1::PreflightReport out;
  out.set_hostname(report.hostname);
  out.set_fs_root(report.fs_root);
  out.set_overall(ToProto(report.overall));
  out.set_duration_ns(report.duration_ns);
  for (const auto& c : report.checks) {
    v1::CheckResult* r = out.add_checks();
    r->set_id(c.id);
    r->set_status(ToProto(c.status));
    r->set_summary(c.summary);
    r->set_remediation(c.remediation);
    r->set_duration_ns(c.duration_ns);
    for (const auto& e : c.evidence) {
      v1::Evidence* ev = r->add_evidence();
      ev->set_source(e.source);
      ev->set_observed(e.observed);
    }
  }
  return out;
}

preflight::Expectations FromProto(const v1::PreflightExpectations& e) {
  preflight::Expectations out;
  out.nvidia_driver = e.nvidia_driver();
  out.cuda_driver = e.cuda_driver();
  out.rdma_core = e.rdma_core();
  out.ofed = e.ofed();
  out.min_mtu_bytes = e.min_mtu_bytes();
  out.hca_firmware = e.hca_firmware();
  out.rail_nics.assign(e.rail_nics().begin(), e.rail_nics().end());
  return out;
}

}  // namespace gdrbench::agent::service
