#include "agent/service/sweep_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/verbs/device_info.h"
#include "common/status.h"

namespace gdrbench::agent::service {

absl::StatusOr<bench::SweepOptions> ToSweepOptions(const v1::SweepParams& p) {
  bench::SweepOptions o;
  o.sizes_bytes.assign(p.sizes_bytes().begin(), p.sizes_bytes().end());
  o.iterations = p.iterations();
  o.duration_ns = p.duration_ns();
  if (o.iterations == 0 && o.duration_ns == 0) o.iterations = bench::kDefaultIterations;
  o.warmup_iterations = p.warmup_iterations();
  o.qps = p.qps() == 0 ? bench::kDefaultQps : p.qps();
  o.tx_depth = p.tx_depth() == 0 ? bench::kDefaultTxDepth : p.tx_depth();
  o.cq_moderation =
      p.cq_moderation() == 0 ? std::min(bench::kDefaultCqModeration, o.tx_depth) : p.cq_moderation();
  o.post_list = p.post_list() == 0 ? bench::kDefaultPostList : p.post_list();
  o.bidirectional = p.bidirectional();
  o.verify = p.verify();
  o.seed = p.seed() == 0 ? 1 : p.seed();
  o.qp_timeout = p.qp_timeout() == 0 ? bench::kDefaultQpTimeout : p.qp_timeout();
  RETURN_IF_ERROR(bench::Validate(o));
  return o;
}

void ToProto(const bench::SizeOutcome& o, v1::SizeResult* out) {
  out->set_size_bytes(o.size_bytes);
  out->set_iterations(o.iterations);
  out->set_bw_avg_gbps(o.bw_avg_gbps);
  out->set_bw_peak_gbps(o.bw_peak_gbps);
  out->set_msg_rate_mpps(o.msg_rate_mpps);
  out->set_duration_ns(o.duration_ns);
  out->set_status(o.ok ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
  out->set_error(o.error);
  out->set_perftest_command(o.perftest_command);
}

absl::Status CheckDevice(const FsRoot& fs, const std::vector<std::string>& owned,
                         const std::string& device) {
  if (device.empty()) return absl::InvalidArgumentError("no RDMA device given (device is empty)");
  if (!owned.empty() && std::find(owned.begin(), owned.end(), device) == owned.end()) {
    return absl::InvalidArgumentError(absl::StrCat("this agent does not own RDMA device '", device,
                                                   "' (it owns ", absl::StrJoin(owned, ", "),
                                                   ")"));
  }
  std::string reason;
  ASSIGN_OR_RETURN(auto devs, verbs::ListDevices(fs, {device}, &reason));
  if (devs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("RDMA device '", device, "' is absent: ", reason));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::service
