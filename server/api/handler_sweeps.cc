// Handler: sweeps the server runs (submit, get, list, cancel, watch).
#include "server/api/handler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/api/handler_internal.h"
#include "server/history/capacity_report.h"
#include "server/history/compare.h"
#include "server/history/export.h"
#include "server/history/node_stats.h"
#include "server/history/references.h"

namespace gdrbench::server::api {

using internal::Bad;
using internal::CheckNode;
using internal::DaysAgoMicros;

absl::StatusOr<v1::SweepJob> Handler::SubmitSweep(const v1::SubmitSweepRequest& req, const Principal& who) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  return sweeps_.Submit(req.cluster(), req.spec(), who.name);
}

absl::StatusOr<v1::SweepJob> Handler::GetSweep(const v1::GetSweepRequest& req) {
  if (req.job_id().empty()) return Bad("job_id is required");
  return sweeps_.Get(req.job_id());
}

absl::StatusOr<v1::ListSweepsResponse> Handler::ListSweeps(const v1::ListSweepsRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
  v1::ListSweepsResponse out;
  for (auto& j : sweeps_.List(req.cluster())) *out.add_jobs() = std::move(j);
  return out;
}

absl::StatusOr<v1::SweepJob> Handler::CancelSweep(const v1::CancelSweepRequest& req) {
  if (req.job_id().empty()) return Bad("job_id is required");
  return sweeps_.Cancel(req.job_id());
}

absl::Status Handler::WatchSweep(const v1::WatchSweepRequest& req,
                                 const std::function<bool(const v1::SweepJob&)>& fn,
                                 const std::function<bool()>& still_wanted) {
  if (req.job_id().empty()) return Bad("job_id is required");
  return sweeps_.Watch(req.job_id(), fn, still_wanted);
}

}  // namespace gdrbench::server::api
