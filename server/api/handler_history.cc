// Handler: a cluster's history (link and node trends, baselines, link references, clusters, capacity).
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

absl::StatusOr<v1::TrendResponse> Handler::GetLinkTrend(const v1::LinkTrendRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  GDR_RETURN_IF_ERROR(CheckNode(req.src(), "src", true));
  GDR_RETURN_IF_ERROR(CheckNode(req.dst(), "dst", true));
  if (req.last() > 10000) return Bad("last must be at most 10000 runs");
  GDR_ASSIGN_OR_RETURN(int64_t src, store_.NodeId(req.src()));
  GDR_ASSIGN_OR_RETURN(int64_t dst, store_.NodeId(req.dst()));
  v1::TrendResponse out;
  if (src < 0 || dst < 0) return out;  // never stored: no points
  GDR_ASSIGN_OR_RETURN(auto points,
                       store_.LinkTrend(req.cluster(), src, dst, req.rail(), req.size_bytes(),
                                        DaysAgoMicros(req.days()), req.last() ? req.last() : 30));
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    v1::TrendPoint* p = out.add_points();
    p->set_run_id(it->run_id);
    *p->mutable_started_at() = store::FromMicros(it->started_us);
    p->set_bw_avg_gbps(it->cell.bw_avg_gbps);
    p->set_status(static_cast<v1::ResultStatus>(it->cell.status));
    p->set_verdict(history::VerdictName(static_cast<history::CellVerdict>(it->cell.verdict)));
    p->set_size_bytes(it->cell.size_bytes);
    p->set_rail(it->cell.rail);
  }
  return out;
}

absl::StatusOr<v1::TrendResponse> Handler::GetNodeTrend(const v1::NodeTrendRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  GDR_RETURN_IF_ERROR(CheckNode(req.node(), "node", true));
  if (req.last() > 10000) return Bad("last must be at most 10000 runs");
  GDR_ASSIGN_OR_RETURN(int64_t node, store_.NodeId(req.node()));
  v1::TrendResponse out;
  if (node < 0) return out;
  std::optional<uint32_t> rail;
  if (req.has_rail()) rail = req.rail();
  GDR_ASSIGN_OR_RETURN(auto points, store_.NodeTrend(req.cluster(), node, rail, DaysAgoMicros(req.days()),
                                                     req.last() ? req.last() : 30));
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    v1::TrendPoint* p = out.add_points();
    p->set_run_id(it->run_id);
    *p->mutable_started_at() = store::FromMicros(it->started_us);
    p->set_bw_avg_gbps(it->stat.median_gbps);
    p->set_ok_cells(it->stat.ok_cells);
    p->set_low_cells(it->stat.low_cells);
    p->set_failed_cells(it->stat.failed_cells);
    p->set_size_bytes(it->stat.size_bytes);
    p->set_rail(it->stat.rail);
  }
  return out;
}

absl::StatusOr<v1::BaselineInfo> Handler::SetBaseline(const v1::SetBaselineRequest& req,
                                                      const Principal& who) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
  GDR_ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  const std::string cluster = req.cluster().empty() ? row.cluster : req.cluster();
  if (cluster != row.cluster) {
    return Bad(absl::StrCat("run ", row.run_id, " is of cluster ", row.cluster, ", not ", cluster));
  }
  GDR_RETURN_IF_ERROR(store_.SetBaseline(cluster, row.key, who.name));
  v1::GetBaselineRequest get;
  get.set_cluster(cluster);
  return GetBaseline(get);
}

absl::StatusOr<v1::LinkReferences> Handler::GetLinkReferences(const v1::GetLinkReferencesRequest& req) {
  return history::FindLinkReferences(store_, req, options_.ingest);
}

absl::StatusOr<v1::BaselineInfo> Handler::GetBaseline(const v1::GetBaselineRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  GDR_ASSIGN_OR_RETURN(auto bl, store_.GetBaseline(req.cluster()));
  v1::BaselineInfo out;
  out.set_cluster(req.cluster());
  if (!bl) return out;
  GDR_ASSIGN_OR_RETURN(auto row, store_.FindRunByKey(bl->run_key));
  if (row) {
    out.set_run_id(row->run_id);
    *out.mutable_run() = ToSummary(*row);
  }
  *out.mutable_set_at() = store::FromMicros(bl->set_us);
  out.set_set_by(bl->set_by);
  return out;
}

absl::StatusOr<v1::ListClustersResponse> Handler::ListClusters(const v1::ListClustersRequest&) {
  GDR_ASSIGN_OR_RETURN(auto rows, store_.Clusters());
  v1::ListClustersResponse out;
  std::set<std::string> sweepable = sweeps_.clusters();
  for (const auto& r : rows) {
    v1::ClusterInfo* c = out.add_clusters();
    c->set_name(r.name);
    c->set_runs(r.runs);
    c->set_last_run_id(r.last_run_id);
    c->set_baseline_run_id(r.baseline_run_id);
    c->set_sweeps(sweepable.erase(r.name) > 0);
  }
  for (const auto& name : sweepable) {  // configured, never run yet
    v1::ClusterInfo* c = out.add_clusters();
    c->set_name(name);
    c->set_sweeps(true);
  }
  return out;
}

absl::StatusOr<v1::CapacityReport> Handler::GetCapacityReport(const v1::GetCapacityReportRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  if (req.days() > 3660) return Bad("days must be at most 3660 (0 = 30)");
  if (req.weakest() > 1000) return Bad("weakest must be at most 1000 links (0 = 20)");
  history::CapacityOptions o;
  o.days = req.days() ? req.days() : 30;
  o.weakest = req.weakest() ? req.weakest() : 20;
  return history::BuildCapacityReport(store_, req.cluster(), o);
}

}  // namespace gdrbench::server::api
