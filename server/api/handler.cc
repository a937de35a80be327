#include "server/api/handler.h"
#include "server/api/handler_internal.h"

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
namespace internal {

absl::Status Bad(absl::string_view s) { return absl::InvalidArgumentError(s); }

absl::Status CheckNode(const std::string& n, const char* field, bool required) {
  if (n.empty()) return required ? Bad(absl::StrCat(field, " is required (a node name)")) : absl::OkStatus();
  return history::CheckNodeName(n, field);
}

int64_t DaysAgoMicros(uint32_t days) {
  return days ? store::NowMicros() - int64_t{days} * 86400 * 1000000 : 0;
}

}  // namespace internal
namespace {

using internal::Bad;

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

}  // namespace

absl::Status CheckPageSize(uint32_t n, uint32_t max, const char* field) {
  if (n > max) return Bad(absl::StrCat(field, " ", n, " is more than ", max));
  return absl::OkStatus();
}

absl::StatusOr<std::pair<int64_t, int64_t>> ParseRunsToken(const std::string& t) {
  GDR_ASSIGN_OR_RETURN(auto v, Numbers(t, 't', 2));
  return std::make_pair(v[0], v[1]);
}

absl::StatusOr<std::tuple<uint32_t, uint64_t, int64_t, int64_t>> ParseCellsToken(const std::string& t) {
  GDR_ASSIGN_OR_RETURN(auto v, Numbers(t, 'c', 4));
  return std::make_tuple(static_cast<uint32_t>(v[0]), static_cast<uint64_t>(v[1]), v[2], v[3]);
}

absl::StatusOr<uint64_t> ParseOffsetToken(const std::string& t) {
  GDR_ASSIGN_OR_RETURN(auto v, Numbers(t, 'o', 1));
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
    : store_(store), sweeps_(sweeps), options_(options), live_(store, [&] {
        history::LiveOptions live = options.live;
        live.max_nodes = std::min(live.max_nodes, options.ingest.max_nodes);
        live.max_cells = std::min(live.max_cells, options.ingest.max_cells);
        return live;
      }()) {}

absl::Status Handler::DrainRefusal() const {
  if (!draining_) return absl::OkStatus();
  return absl::UnavailableError("the server is shutting down (SIGTERM): nothing stored; upload again once it is back");
}

absl::StatusOr<store::RunRow> Handler::Run(const std::string& run_id, const char* field) {
  GDR_RETURN_IF_ERROR(CheckRunId(run_id, field));
  GDR_ASSIGN_OR_RETURN(std::optional<store::RunRow> row, store_.FindRun(run_id));
  if (!row) return absl::NotFoundError(absl::StrCat("run ", run_id, " is not stored"));
  return *row;
}

}  // namespace gdrbench::server::api
