#include "server/api/handler.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"
#include "server/history/capacity_report.h"
#include "server/history/compare.h"
#include "server/history/export.h"
#include "server/history/node_stats.h"
#include "server/history/references.h"

namespace gdrbench::server::api {
namespace {

absl::Status Bad(absl::string_view s) { return absl::InvalidArgumentError(s); }

absl::Status CheckNode(const std::string& n, const char* field, bool required) {
  if (n.empty()) return required ? Bad(absl::StrCat(field, " is required (a node name)")) : absl::OkStatus();
  return history::CheckNodeName(n, field);
}

template <typename... T>
absl::StatusOr<std::vector<int64_t>> Numbers(const std::string& token, char tag, size_t count) {
  auto bad = [&] {
    return Bad(absl::StrCat("page_token '", token.substr(0, 40), "' is not one this server issued"));
  };
  if (token.empty() || token[0] != tag) return bad();
  std::vector<std::string> parts = absl::StrSplit(token.substr(1), '.');
  if (parts.size() != count) return bad();
  std::vector<int64_t> out;
  for (const auto& p : parts) {
    int64_t v;
    if (!absl::SimpleAtoi(p, &v) || v < 0) return bad();
    out.push_back(v);
  }
  return out;
}

int64_t DaysAgoMicros(uint32_t days) {
  return days ? store::NowMicros() - int64_t{days} * 86400 * 1000000 : 0;
}

}  // namespace

absl::Status CheckPageSize(uint32_t n, uint32_t max, const char* field) {
  if (n > max) return Bad(absl::StrCat(field, " ", n, " is more than ", max));
  return absl::OkStatus();
}

absl::StatusOr<std::pair<int64_t, int64_t>> ParseRunsToken(const std::string& t) {
  ASSIGN_OR_RETURN(auto v, Numbers(t, 't', 2));
  return std::make_pair(v[0], v[1]);
}

absl::StatusOr<std::tuple<uint32_t, uint64_t, int64_t, int64_t>> ParseCellsToken(const std::string& t) {
  ASSIGN_OR_RETURN(auto v, Numbers(t, 'c', 4));
  return std::make_tuple(static_cast<uint32_t>(v[0]), static_cast<uint64_t>(v[1]), v[2], v[3]);
}

absl::StatusOr<uint64_t> ParseOffsetToken(const std::string& t) {
  ASSIGN_OR_RETURN(auto v, Numbers(t, 'o', 1));
  return static_cast<uint64_t>(v[0]);
}

v1::RunSummary ToSummary(const store::RunRow& r) {
  v1::RunSummary s;
  s.set_run_id(r.run_id);
  s.set_cluster(r.cluster);
  *s.mutable_started_at() = store::FromMicros(r.started_us);
  *s.mutable_finished_at() = store::FromMicros(r.finished_us);
  *s.mutable_stored_at() = store::FromMicros(r.stored_us);
  s.set_mode(r.mode);
  s.set_passed(r.passed);
  s.set_summary(r.summary);
  s.set_nodes(r.nodes);
  s.set_rails(r.rails);
  s.set_cells(r.cells);
  s.set_low_cells(r.low_cells);
  s.set_failed_cells(r.failed_cells);
  s.set_baseline_regressions(r.baseline_regressions);
  s.set_last_pass_regressions(r.last_pass_regressions);
  s.set_is_baseline(r.is_baseline);
  s.set_verdict_cells(r.verdict_cells);
  return s;
}

Handler::Handler(store::Store& store, sweeps::SweepManager& sweeps, HandlerOptions options)
    : store_(store), sweeps_(sweeps), options_(options) {}

absl::Status Handler::DrainRefusal() const {
  if (!draining_) return absl::OkStatus();
  return absl::UnavailableError("the server is shutting down (SIGTERM): nothing stored; upload again once it is back");
}

std::unique_ptr<history::Ingester> Handler::NewUpload() {
  return std::make_unique<history::Ingester>(store_, options_.ingest);
}

absl::StatusOr<v1::UploadRunResponse> Handler::StoreRun(const v1::Run& run) {
  return history::StoreRun(store_, run, options_.ingest);
}

absl::StatusOr<store::RunRow> Handler::Run(const std::string& run_id, const char* field) {
  RETURN_IF_ERROR(CheckRunId(run_id, field));
  ASSIGN_OR_RETURN(std::optional<store::RunRow> row, store_.FindRun(run_id));
  if (!row) return absl::NotFoundError(absl::StrCat("run ", run_id, " is not stored"));
  return *row;
}

absl::StatusOr<v1::Run> Handler::GetRun(const v1::GetRunRequest& req) {
  if (!v1::RunView_IsValid(req.view())) return Bad("view is not a RunView");
  ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  if (req.view() == v1::RUN_VIEW_FULL) return history::AssembleRun(store_, row, options_.max_full_cells);
  return store_.ReadHeader(row.key);
}

absl::Status Handler::ExportRun(const v1::ExportRunRequest& req,
                                const std::function<absl::Status(const v1::RunChunk&)>& fn) {
  ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  return history::ExportRun(store_, row, fn);
}

absl::StatusOr<v1::ListRunsResponse> Handler::ListRuns(const v1::ListRunsRequest& req) {
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
  RETURN_IF_ERROR(CheckPageSize(req.page_size(), 1000, "page_size"));
  store::RunFilter f;
  f.cluster = req.cluster();
  if (req.passed() == "true") {
    f.passed = true;
  } else if (req.passed() == "false") {
    f.passed = false;
  } else if (!req.passed().empty()) {
    return Bad(absl::StrCat("passed '", req.passed().substr(0, 20), "' is not true, false or empty"));
  }
  if (req.has_since()) f.since_us = store::ToMicros(req.since());
  if (req.has_until()) f.until_us = store::ToMicros(req.until());
  f.limit = req.page_size() ? req.page_size() : 50;
  if (!req.page_token().empty()) {
    ASSIGN_OR_RETURN(f.after, ParseRunsToken(req.page_token()));
  }
  const uint32_t want = f.limit;
  f.limit = want + 1;  // one more tells whether there is a next page
  ASSIGN_OR_RETURN(std::vector<store::RunRow> rows, store_.ListRuns(f));
  v1::ListRunsResponse out;
  for (size_t i = 0; i < rows.size() && i < want; ++i) *out.add_runs() = ToSummary(rows[i]);
  if (rows.size() > want) {
    out.set_next_page_token(absl::StrCat("t", rows[want - 1].started_us, ".", rows[want - 1].key));
  }
  return out;
}

absl::StatusOr<v1::ListCellsResponse> Handler::ListCells(const v1::ListCellsRequest& req) {
  ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  RETURN_IF_ERROR(CheckNode(req.node(), "node", false));
  RETURN_IF_ERROR(CheckNode(req.src(), "src", false));
  RETURN_IF_ERROR(CheckNode(req.dst(), "dst", false));
  RETURN_IF_ERROR(CheckPageSize(req.page_size(), 10000, "page_size"));
  if (!req.node().empty() && (!req.src().empty() || !req.dst().empty())) {
    return Bad("node selects cells from or to a node: give node, or src and/or dst, not both");
  }
  history::CellVerdict verdict;
  if (!history::ParseVerdict(req.verdict(), &verdict)) {
    return Bad(absl::StrCat("verdict '", req.verdict().substr(0, 20), "' is not pass, low, fail or empty"));
  }
  const uint32_t limit = req.page_size() ? req.page_size() : 1000;
  v1::ListCellsResponse out;
  auto id = [&](const std::string& name) -> absl::StatusOr<int64_t> {
    if (name.empty()) return -1;
    ASSIGN_OR_RETURN(int64_t v, store_.NodeId(name));
    if (v < 0) return absl::NotFoundError(absl::StrCat("node ", name, " is in no stored run"));
    return v;
  };
  store::CellQuery q;
  q.run = row.key;
  if (req.has_rail()) q.rail = req.rail();
  q.size_bytes = req.size_bytes();
  q.verdict = req.verdict().empty() ? -1 : static_cast<int>(verdict);
  if (!req.page_token().empty()) {
    ASSIGN_OR_RETURN(q.after, ParseCellsToken(req.page_token()));
  }
  q.limit = limit + 1;
  std::vector<store::CellRecord> cells;
  auto collect = [&](const store::CellRecord& c) {
    cells.push_back(c);
    return absl::OkStatus();
  };
  if (!req.node().empty()) {
    // From the node (one range per rail and size), then to it; merged in key order.
    ASSIGN_OR_RETURN(int64_t n, id(req.node()));
    q.src = n;
    RETURN_IF_ERROR(store_.ReadCells(q, collect));
    q.src = -1;
    q.dst = n;
    RETURN_IF_ERROR(store_.ReadCells(q, collect));
    std::sort(cells.begin(), cells.end(), [](const store::CellRecord& a, const store::CellRecord& b) {
      return std::make_tuple(a.rail, a.size_bytes, a.src, a.dst) <
             std::make_tuple(b.rail, b.size_bytes, b.src, b.dst);
    });
    cells.erase(std::unique(cells.begin(), cells.end(),
                            [](const store::CellRecord& a, const store::CellRecord& b) {
                              return a.rail == b.rail && a.size_bytes == b.size_bytes && a.src == b.src &&
                                     a.dst == b.dst;
                            }),
                cells.end());
  } else {
    ASSIGN_OR_RETURN(q.src, id(req.src()));
    ASSIGN_OR_RETURN(q.dst, id(req.dst()));
    RETURN_IF_ERROR(store_.ReadCells(q, collect));
  }
  for (size_t i = 0; i < cells.size() && i < limit; ++i) {
    const auto& c = cells[i];
    v1::CellRow* r = out.add_cells();
    r->set_rail(c.rail);
    r->set_size_bytes(c.size_bytes);
    r->set_src(store_.NodeName(c.src));
    r->set_dst(store_.NodeName(c.dst));
    r->set_status(static_cast<v1::ResultStatus>(c.status));
    r->set_bw_avg_gbps(c.bw_avg_gbps);
    r->set_verdict(history::VerdictName(static_cast<history::CellVerdict>(c.verdict)));
  }
  if (cells.size() > limit) {
    const auto& c = cells[limit - 1];
    out.set_next_page_token(absl::StrCat("c", c.rail, ".", c.size_bytes, ".", c.src, ".", c.dst));
  }
  return out;
}

absl::StatusOr<v1::CompareRunsResponse> Handler::CompareRuns(const v1::CompareRunsRequest& req) {
  ASSIGN_OR_RETURN(store::RunRow a, Run(req.a(), "a"));
  ASSIGN_OR_RETURN(store::RunRow b, Run(req.b(), "b"));
  RETURN_IF_ERROR(CheckNode(req.node(), "node", false));
  RETURN_IF_ERROR(CheckPageSize(req.page_size(), 10000, "page_size"));
  if (!(req.tolerance() >= 0 && req.tolerance() < 1)) return Bad("tolerance must be 0 (the server's) to below 1");
  history::CompareSpec spec;
  if (req.has_rail()) spec.rail = req.rail();
  spec.size_bytes = req.size_bytes();
  spec.tolerance = req.tolerance() > 0 ? req.tolerance() : options_.ingest.tolerance;
  spec.page_size = req.page_size() ? req.page_size() : 100;
  if (!req.page_token().empty()) {
    ASSIGN_OR_RETURN(spec.offset, ParseOffsetToken(req.page_token()));
  }
  if (!req.node().empty()) {
    ASSIGN_OR_RETURN(spec.node, store_.NodeId(req.node()));
    if (spec.node < 0) return absl::NotFoundError(absl::StrCat("node ", req.node(), " is in no stored run"));
  }
  return history::CompareRuns(store_, a, b, spec);
}

absl::StatusOr<v1::TrendResponse> Handler::GetLinkTrend(const v1::LinkTrendRequest& req) {
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  RETURN_IF_ERROR(CheckNode(req.src(), "src", true));
  RETURN_IF_ERROR(CheckNode(req.dst(), "dst", true));
  if (req.last() > 10000) return Bad("last must be at most 10000 runs");
  ASSIGN_OR_RETURN(int64_t src, store_.NodeId(req.src()));
  ASSIGN_OR_RETURN(int64_t dst, store_.NodeId(req.dst()));
  v1::TrendResponse out;
  if (src < 0 || dst < 0) return out;  // never stored: no points
  ASSIGN_OR_RETURN(auto points, store_.LinkTrend(req.cluster(), src, dst, req.rail(), req.size_bytes(),
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
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  RETURN_IF_ERROR(CheckNode(req.node(), "node", true));
  if (req.last() > 10000) return Bad("last must be at most 10000 runs");
  ASSIGN_OR_RETURN(int64_t node, store_.NodeId(req.node()));
  v1::TrendResponse out;
  if (node < 0) return out;
  std::optional<uint32_t> rail;
  if (req.has_rail()) rail = req.rail();
  ASSIGN_OR_RETURN(auto points, store_.NodeTrend(req.cluster(), node, rail, DaysAgoMicros(req.days()),
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
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
  ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  const std::string cluster = req.cluster().empty() ? row.cluster : req.cluster();
  if (cluster != row.cluster) {
    return Bad(absl::StrCat("run ", row.run_id, " is of cluster ", row.cluster, ", not ", cluster));
  }
  RETURN_IF_ERROR(store_.SetBaseline(cluster, row.key, who.name));
  v1::GetBaselineRequest get;
  get.set_cluster(cluster);
  return GetBaseline(get);
}

absl::StatusOr<v1::LinkReferences> Handler::GetLinkReferences(const v1::GetLinkReferencesRequest& req) {
  return history::FindLinkReferences(store_, req, options_.ingest);
}

absl::StatusOr<v1::BaselineInfo> Handler::GetBaseline(const v1::GetBaselineRequest& req) {
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  ASSIGN_OR_RETURN(auto bl, store_.GetBaseline(req.cluster()));
  v1::BaselineInfo out;
  out.set_cluster(req.cluster());
  if (!bl) return out;
  ASSIGN_OR_RETURN(auto row, store_.FindRunByKey(bl->run_key));
  if (row) {
    out.set_run_id(row->run_id);
    *out.mutable_run() = ToSummary(*row);
  }
  *out.mutable_set_at() = store::FromMicros(bl->set_us);
  out.set_set_by(bl->set_by);
  return out;
}

absl::StatusOr<v1::ListClustersResponse> Handler::ListClusters(const v1::ListClustersRequest&) {
  ASSIGN_OR_RETURN(auto rows, store_.Clusters());
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
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  if (req.days() > 3660) return Bad("days must be at most 3660 (0 = 30)");
  if (req.weakest() > 1000) return Bad("weakest must be at most 1000 links (0 = 20)");
  history::CapacityOptions o;
  o.days = req.days() ? req.days() : 30;
  o.weakest = req.weakest() ? req.weakest() : 20;
  return history::BuildCapacityReport(store_, req.cluster(), o);
}

absl::StatusOr<v1::SweepJob> Handler::SubmitSweep(const v1::SubmitSweepRequest& req, const Principal& who) {
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", true));
  return sweeps_.Submit(req.cluster(), req.spec(), who.name);
}

absl::StatusOr<v1::SweepJob> Handler::GetSweep(const v1::GetSweepRequest& req) {
  if (req.job_id().empty()) return Bad("job_id is required");
  return sweeps_.Get(req.job_id());
}

absl::StatusOr<v1::ListSweepsResponse> Handler::ListSweeps(const v1::ListSweepsRequest& req) {
  RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
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
