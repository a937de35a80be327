#include "server/web/web_data.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "report/left_out.h"
#include "report/matrix_blob.h"
#include "server/api/handler.h"
#include "server/history/node_stats.h"
#include "server/web/blame_subject.h"

namespace gdrbench::server::web {
namespace {

// Worst first: FAIL, WARN.
int Severity(v1::CheckStatus s) { return s == v1::CHECK_STATUS_FAIL ? 2 : s == v1::CHECK_STATUS_WARN ? 1 : 0; }

const v1::BandwidthMatrix* FindMatrix(const v1::Run& header, std::optional<uint32_t> rail, uint64_t size) {
  if (header.matrices().empty()) return nullptr;
  uint32_t r = header.matrices(0).rail();
  if (rail) {
    r = *rail;
  } else {
    for (const auto& m : header.matrices()) r = std::min(r, m.rail());
  }
  const v1::BandwidthMatrix* best = nullptr;
  for (const auto& m : header.matrices()) {
    if (m.rail() != r) continue;
    if (size != 0) {
      if (m.size_bytes() == size) return &m;
    } else if (best == nullptr || m.size_bytes() > best->size_bytes()) {
      best = &m;
    }
  }
  return best;
}

std::set<std::string> NodeNames(const v1::Run& header) {
  std::set<std::string> names;
  for (const auto& m : header.matrices()) names.insert(m.nodes().begin(), m.nodes().end());
  return names;
}

}  // namespace

v1::NodeFindings FindingsOf(const v1::PreflightReport& report) {
  v1::NodeFindings f;
  f.set_node(report.hostname());
  f.set_overall(report.overall());
  f.set_checks(static_cast<uint32_t>(report.checks_size()));
  std::vector<const v1::CheckResult*> bad;
  for (const auto& c : report.checks()) {
    if (Severity(c.status()) > 0) bad.push_back(&c);
  }
  std::stable_sort(bad.begin(), bad.end(), [](const v1::CheckResult* a, const v1::CheckResult* b) {
    return Severity(a->status()) > Severity(b->status());
  });
  for (const auto* c : bad) *f.add_problems() = *c;
  return f;
}

absl::StatusOr<v1::RunOverview> RunOverview(store::Store& store, const store::RunRow& run) {
  GDR_ASSIGN_OR_RETURN(v1::Run h, store.ReadHeader(run.key));
  v1::RunOverview o;
  *o.mutable_summary() = api::ToSummary(run);
  *o.mutable_params() = h.params();
  *o.mutable_policy() = h.policy();
  std::unordered_map<uint32_t, uint64_t> verdict_size;
  for (const auto& m : h.matrices()) verdict_size[m.rail()] = std::max(verdict_size[m.rail()], m.size_bytes());
  std::vector<const v1::BandwidthMatrix*> ms;
  for (const auto& m : h.matrices()) ms.push_back(&m);
  std::sort(ms.begin(), ms.end(), [](auto* a, auto* b) {
    return std::make_pair(a->rail(), a->size_bytes()) < std::make_pair(b->rail(), b->size_bytes());
  });
  for (const auto* m : ms) {
    v1::MatrixInfo* i = o.add_matrices();
    i->set_rail(m->rail());
    i->set_size_bytes(m->size_bytes());
    i->set_nodes(static_cast<uint32_t>(m->nodes_size()));
    *i->mutable_fleet() = m->fleet();
    i->set_verdict_size(verdict_size[m->rail()] == m->size_bytes());
  }
  *o.mutable_blame() = h.blame();
  *o.mutable_regressions() = h.regressions();
  *o.mutable_excluded_nodes() = h.excluded_nodes();
  const size_t of_nodes = report::NodesOfRun(h);
  for (const auto& g : report::GroupLeftOut(h)) {
    v1::LeftOutCause* c = o.add_left_out();
    c->set_line(report::FormatLeftOutCause(g, of_nodes));
    c->set_cause(g.cause);
    c->set_remedy(g.remedy);
    *c->mutable_nodes() = {g.nodes.begin(), g.nodes.end()};
  }
  *o.mutable_topology() = h.topology();
  std::set<std::string> seen;
  for (const auto* m : ms) {
    for (const auto& n : m->nodes()) {
      if (seen.insert(n).second) o.add_nodes(n);
    }
  }
  std::vector<v1::NodeFindings> findings;
  for (const auto& rep : h.preflight()) {
    v1::NodeFindings f = FindingsOf(rep);
    if (f.problems_size() > 0) findings.push_back(std::move(f));
  }
  std::stable_sort(findings.begin(), findings.end(), [](const v1::NodeFindings& a, const v1::NodeFindings& b) {
    return Severity(a.overall()) > Severity(b.overall());
  });
  for (auto& f : findings) *o.add_preflight() = std::move(f);
  o.set_preflight_nodes(static_cast<uint32_t>(h.preflight_size()));
  return o;
}

namespace {

absl::StatusOr<const v1::BandwidthMatrix*> MatrixOf(const v1::Run& h, const store::RunRow& run,
                                                    std::optional<uint32_t> rail, uint64_t size_bytes) {
  const v1::BandwidthMatrix* m = FindMatrix(h, rail, size_bytes);
  if (m == nullptr) {
    return absl::NotFoundError(absl::StrCat("run ", run.run_id, " has no matrix",
                                            rail ? absl::StrCat(" for rail ", *rail) : "",
                                            size_bytes ? absl::StrCat(" at ", size_bytes, " B") : ""));
  }
  return m;
}

absl::StatusOr<std::string> FromCells(store::Store& store, const store::RunRow& run, const v1::Run& h,
                                      const v1::BandwidthMatrix* m) {
  std::vector<std::string> names(m->nodes().begin(), m->nodes().end());
  GDR_ASSIGN_OR_RETURN(std::vector<int64_t> ids, store.InternNodes(names));
  std::unordered_map<int64_t, uint32_t> index;
  for (uint32_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;
  const size_t n = names.size();
  report::MatrixBlobBuilder b(std::move(names), m->rail(), m->size_bytes());
  b.SetFleet(m->fleet());
  store::CellQuery q;
  q.rail = m->rail();
  q.size_bytes = m->size_bytes();
  // The baseline's value of each cell: the cluster's baseline run this run
  // was compared with when stored (its regressions name it), where the sweep
  // itself ran without a --baseline file.
  std::vector<float> baseline;
  for (const auto& rep : h.regressions()) {
    if (rep.reference() != v1::REGRESSION_REFERENCE_BASELINE || rep.reference_run_id().empty()) continue;
    GDR_ASSIGN_OR_RETURN(std::optional<store::RunRow> ref, store.FindRun(rep.reference_run_id()));
    if (!ref) break;  // deleted by retention since
    baseline.assign(n * n, 0);
    q.run = ref->key;
    GDR_RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& c) {
      auto s = index.find(c.src), d = index.find(c.dst);
      if (s != index.end() && d != index.end() && c.status == v1::RESULT_STATUS_OK) {
        baseline[s->second * n + d->second] = static_cast<float>(c.bw_avg_gbps);
      }
      return absl::OkStatus();
    }));
  }
  q.run = run.key;
  GDR_RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& c) {
    auto s = index.find(c.src), d = index.find(c.dst);
    if (s == index.end() || d == index.end()) return absl::OkStatus();
    const double base = c.baseline_gbps > 0 || baseline.empty() ? c.baseline_gbps : baseline[s->second * n + d->second];
    b.Add(s->second, d->second, static_cast<v1::ResultStatus>(c.status), c.bw_avg_gbps,
          history::VerdictName(static_cast<history::CellVerdict>(c.verdict)), c.expected_gbps, base, c.reason);
    return absl::OkStatus();
  }));
  return b.Finish();
}

}  // namespace

absl::StatusOr<std::string> MatrixBlob(store::Store& store, const store::RunRow& run, std::optional<uint32_t> rail,
                                       uint64_t size_bytes) {
  GDR_ASSIGN_OR_RETURN(v1::Run h, store.ReadHeader(run.key));
  GDR_ASSIGN_OR_RETURN(const v1::BandwidthMatrix* m, MatrixOf(h, run, rail, size_bytes));
  // Each rail's verdict size was encoded at ingest (schema version 3): one read.
  GDR_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                       store.ReadMatrixBlob(run.key, m->rail(), m->size_bytes()));
  if (stored) return *std::move(stored);
  // Other sizes, and runs stored before: from the cells.
  return FromCells(store, run, h, m);
}

absl::StatusOr<std::string> MatrixBlobFromCells(store::Store& store, const store::RunRow& run,
                                                std::optional<uint32_t> rail, uint64_t size_bytes) {
  GDR_ASSIGN_OR_RETURN(v1::Run h, store.ReadHeader(run.key));
  GDR_ASSIGN_OR_RETURN(const v1::BandwidthMatrix* m, MatrixOf(h, run, rail, size_bytes));
  return FromCells(store, run, h, m);
}

namespace {

bool Names(const BlameSubject& b, const HistoryQuery& q) {
  if (!q.node.empty()) return std::find(b.nodes.begin(), b.nodes.end(), q.node) != b.nodes.end();
  if (b.nodes.size() != 2) return false;
  if (q.rail && b.rail && *b.rail != *q.rail) return false;
  // The link page shows both directions of the pair.
  return (b.nodes[0] == q.src && b.nodes[1] == q.dst) || (b.nodes[0] == q.dst && b.nodes[1] == q.src);
}

bool Names(const v1::Regression& g, const HistoryQuery& q) {
  if (!q.node.empty()) return g.src() == q.node || g.dst() == q.node;
  if (g.kind() != v1::REGRESSION_KIND_LINK) return false;
  if (q.rail && g.rail() != *q.rail) return false;
  return (g.src() == q.src && g.dst() == q.dst) || (g.src() == q.dst && g.dst() == q.src);
}

v1::HistoryEntry Entry(const store::RunRow& row, const v1::Run& h, const HistoryQuery& q) {
  v1::HistoryEntry e;
  e.set_run_id(row.run_id);
  *e.mutable_started_at() = store::FromMicros(row.started_us);
  e.set_passed(row.passed);
  const std::set<std::string> names = NodeNames(h);
  e.set_in_run(q.node.empty() ? names.count(q.src) && names.count(q.dst) : names.count(q.node) > 0);
  for (const auto& b : h.blame()) {
    auto s = ParseBlameSubject(b, names);
    if (s && Names(*s, q)) *e.add_blame() = b;
  }
  for (const auto& rep : h.regressions()) {
    for (const auto& g : rep.regressions()) {
      if (Names(g, q)) *e.add_regressions() = g;
    }
  }
  for (const auto& x : h.excluded_nodes()) {
    const std::string& who = q.node.empty() ? q.src : q.node;
    if (x.rfind(who + ":", 0) == 0 || (!q.dst.empty() && x.rfind(q.dst + ":", 0) == 0)) e.set_excluded(x);
  }
  if (!q.node.empty()) {
    for (const auto& rep : h.preflight()) {
      if (rep.hostname() != q.node) continue;
      *e.mutable_preflight() = FindingsOf(rep);
      e.set_preflight_ran(true);
    }
  }
  return e;
}

}  // namespace

absl::StatusOr<v1::SubjectHistory> History(store::Store& store, const HistoryQuery& q) {
  GDR_RETURN_IF_ERROR(api::CheckClusterName(q.cluster, "cluster", true));
  if (q.node.empty() == (q.src.empty() || q.dst.empty())) {
    return absl::InvalidArgumentError("give node, or src and dst (a link)");
  }
  if (q.last == 0 || q.last > 200) return absl::InvalidArgumentError("last must be 1 to 200 runs");
  store::RunFilter f;
  f.cluster = q.cluster;
  f.limit = q.last;
  GDR_ASSIGN_OR_RETURN(std::vector<store::RunRow> rows, store.ListRuns(f));
  v1::SubjectHistory out;
  out.set_cluster(q.cluster);
  out.set_subject(q.node.empty() ? absl::StrCat(q.src, "<->", q.dst) : q.node);
  bool streak = true;
  for (const auto& row : rows) {  // newest first
    GDR_ASSIGN_OR_RETURN(v1::Run h, store.ReadHeader(row.key));
    v1::HistoryEntry e = Entry(row, h, q);
    // A node left out of a sweep (its preflight FAILed, it missed the fleet's
    // expectations) is blamed by that run too: its cells are skipped, not
    // blamed, so only the exclusion names it.
    const bool blamed =
        e.blame_size() > 0 || e.regressions_size() > 0 || (!q.node.empty() && !e.excluded().empty());
    if (blamed) {
      out.set_runs_blamed(out.runs_blamed() + 1);
      out.set_first_blamed_run_id(row.run_id);
      *out.mutable_first_blamed_at() = e.started_at();
      if (streak) {
        out.set_blamed_since_run_id(row.run_id);
        *out.mutable_blamed_since() = e.started_at();
      }
    } else if (e.in_run()) {
      streak = false;
    }
    *out.add_runs() = std::move(e);
  }
  return out;
}

}  // namespace gdrbench::server::web
