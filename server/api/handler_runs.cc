// Handler: runs (upload, get, export, list, cells, compare).
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

std::unique_ptr<history::Ingester> Handler::NewUpload() {
  return std::make_unique<history::Ingester>(store_, options_.ingest);
}

absl::StatusOr<v1::UploadRunResponse> Handler::StoreRun(const v1::Run& run) {
  return history::StoreRun(store_, run, options_.ingest);
}

absl::StatusOr<v1::Run> Handler::GetRun(const v1::GetRunRequest& req) {
  if (!v1::RunView_IsValid(req.view())) return Bad("view is not a RunView");
  GDR_ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  if (req.view() == v1::RUN_VIEW_FULL) return history::AssembleRun(store_, row, options_.max_full_cells);
  return store_.ReadHeader(row.key);
}

absl::Status Handler::ExportRun(const v1::ExportRunRequest& req,
                                const std::function<absl::Status(const v1::RunChunk&)>& fn) {
  GDR_ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  return history::ExportRun(store_, row, fn);
}

absl::StatusOr<v1::ListRunsResponse> Handler::ListRuns(const v1::ListRunsRequest& req) {
  GDR_RETURN_IF_ERROR(CheckClusterName(req.cluster(), "cluster", false));
  GDR_RETURN_IF_ERROR(CheckPageSize(req.page_size(), 1000, "page_size"));
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
    GDR_ASSIGN_OR_RETURN(f.after, ParseRunsToken(req.page_token()));
  }
  const uint32_t want = f.limit;
  f.limit = want + 1;  // one more tells whether there is a next page
  GDR_ASSIGN_OR_RETURN(std::vector<store::RunRow> rows, store_.ListRuns(f));
  v1::ListRunsResponse out;
  for (size_t i = 0; i < rows.size() && i < want; ++i) *out.add_runs() = ToSummary(rows[i]);
  if (rows.size() > want) {
    out.set_next_page_token(absl::StrCat("t", rows[want - 1].started_us, ".", rows[want - 1].key));
  }
  return out;
}

absl::StatusOr<v1::ListCellsResponse> Handler::ListCells(const v1::ListCellsRequest& req) {
  GDR_ASSIGN_OR_RETURN(store::RunRow row, Run(req.run_id(), "run_id"));
  GDR_RETURN_IF_ERROR(CheckNode(req.node(), "node", false));
  GDR_RETURN_IF_ERROR(CheckNode(req.src(), "src", false));
  GDR_RETURN_IF_ERROR(CheckNode(req.dst(), "dst", false));
  GDR_RETURN_IF_ERROR(CheckPageSize(req.page_size(), 10000, "page_size"));
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
    GDR_ASSIGN_OR_RETURN(int64_t v, store_.NodeId(name));
    if (v < 0) return absl::NotFoundError(absl::StrCat("node ", name, " is in no stored run"));
    return v;
  };
  store::CellQuery q;
  q.run = row.key;
  if (req.has_rail()) q.rail = req.rail();
  q.size_bytes = req.size_bytes();
  q.verdict = req.verdict().empty() ? -1 : static_cast<int>(verdict);
  if (!req.page_token().empty()) {
    GDR_ASSIGN_OR_RETURN(q.after, ParseCellsToken(req.page_token()));
  }
  q.limit = limit + 1;
  std::vector<store::CellRecord> cells;
  auto collect = [&](const store::CellRecord& c) {
    cells.push_back(c);
    return absl::OkStatus();
  };
  if (!req.node().empty()) {
    // From the node (one range per rail and size), then to it; merged in key order.
    GDR_ASSIGN_OR_RETURN(int64_t n, id(req.node()));
    q.src = n;
    GDR_RETURN_IF_ERROR(store_.ReadCells(q, collect));
    q.src = -1;
    q.dst = n;
    GDR_RETURN_IF_ERROR(store_.ReadCells(q, collect));
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
    GDR_ASSIGN_OR_RETURN(q.src, id(req.src()));
    GDR_ASSIGN_OR_RETURN(q.dst, id(req.dst()));
    GDR_RETURN_IF_ERROR(store_.ReadCells(q, collect));
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
  GDR_ASSIGN_OR_RETURN(store::RunRow a, Run(req.a(), "a"));
  GDR_ASSIGN_OR_RETURN(store::RunRow b, Run(req.b(), "b"));
  GDR_RETURN_IF_ERROR(CheckNode(req.node(), "node", false));
  GDR_RETURN_IF_ERROR(CheckPageSize(req.page_size(), 10000, "page_size"));
  if (!(req.tolerance() >= 0 && req.tolerance() < 1)) return Bad("tolerance must be 0 (the server's) to below 1");
  history::CompareSpec spec;
  if (req.has_rail()) spec.rail = req.rail();
  spec.size_bytes = req.size_bytes();
  spec.tolerance = req.tolerance() > 0 ? req.tolerance() : options_.ingest.tolerance;
  spec.page_size = req.page_size() ? req.page_size() : 100;
  if (!req.page_token().empty()) {
    GDR_ASSIGN_OR_RETURN(spec.offset, ParseOffsetToken(req.page_token()));
  }
  if (!req.node().empty()) {
    GDR_ASSIGN_OR_RETURN(spec.node, store_.NodeId(req.node()));
    if (spec.node < 0) return absl::NotFoundError(absl::StrCat("node ", req.node(), " is in no stored run"));
  }
  return history::CompareRuns(store_, a, b, spec);
}

}  // namespace gdrbench::server::api
