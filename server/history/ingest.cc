#include "server/history/ingest.h"
#include "server/history/names.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/util/message_differencer.h"
#include "common/status.h"
#include "controller/report/matrix_blob.h"
#include "server/history/run_fields.h"
#include "server/store/staged_run.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::history {
namespace {

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

}  // namespace

absl::Status ValidateHeader(const v1::Run& h, const IngestOptions& o) {
  RETURN_IF_ERROR(CheckRunId(h.run_id(), "run_id"));
  const std::string where = absl::StrCat("run ", h.run_id());
  if (absl::Status st = CheckClusterName(h.cluster(), "cluster", /*required=*/false); !st.ok()) {
    return Bad(absl::StrCat(where, ": ", st.message()));
  }
  if (h.started_at().seconds() <= 0) return Bad(absl::StrCat(where, ": started_at is not set"));
  if (h.has_finished_at() && store::ToMicros(h.finished_at()) < store::ToMicros(h.started_at())) {
    return Bad(absl::StrCat(where, ": finished_at is before started_at"));
  }
  if (h.pairs_size() > 0) {
    return Bad(absl::StrCat(where, ": the header chunk carries pairs: send them in pair chunks"));
  }
  if (h.regressions_size() > 0) {
    return Bad(absl::StrCat(where, ": regressions are the server's to compute; send none"));
  }
  // A run measures something, or says which nodes it left out and why.
  if (h.matrices_size() == 0 && h.excluded_nodes_size() == 0) {
    return Bad(absl::StrCat(where, ": no matrices and no excluded nodes: nothing was measured"));
  }
  if (h.matrices_size() > static_cast<int>(o.max_matrices)) {
    return Bad(absl::StrCat(where, ": ", h.matrices_size(), " matrices, more than ", o.max_matrices));
  }
  std::set<std::pair<uint32_t, uint64_t>> seen;
  for (int i = 0; i < h.matrices_size(); ++i) {
    const auto& m = h.matrices(i);
    const std::string mw = absl::StrCat(where, ": matrix ", i, " (rail ", m.rail(), ", ", m.size_bytes(), " B)");
    if (m.cells_size() > 0) {
      return Bad(absl::StrCat(mw, ": the header chunk carries cells: send them in cell chunks"));
    }
    // Size 0: the matrix of tests that failed before measuring any size.
    if (m.size_bytes() > (1ull << 40)) return Bad(absl::StrCat(mw, ": size_bytes must be at most 1 TiB"));
    if (m.rail() >= 4096) return Bad(absl::StrCat(mw, ": rail must be below 4096"));
    // The store's cells, baselines and regressions are keyed by one rail: a
    // cross-rail lane stored under its initiators' rail would be compared with
    // that rail's same-rail cells.
    if (m.has_dst_rail() && m.dst_rail() != m.rail()) {
      return Bad(absl::StrCat(mw, ": a --mode cross-rail matrix (rail ", m.rail(), " -> ", m.dst_rail(),
                              "): the store keeps same-rail runs only; keep this run's run.json"));
    }
    if (!seen.insert({m.rail(), m.size_bytes()}).second) {
      return Bad(absl::StrCat(mw, ": a second matrix for the same rail and size"));
    }
    if (m.nodes_size() == 0 || m.nodes_size() > static_cast<int>(o.max_nodes)) {
      return Bad(absl::StrCat(mw, ": ", m.nodes_size(), " nodes (1 to ", o.max_nodes, " allowed)"));
    }
    std::set<std::string> names;
    for (const auto& n : m.nodes()) {
      RETURN_IF_ERROR(CheckNodeName(n, mw));
      if (!names.insert(n).second) return Bad(absl::StrCat(mw, ": node ", n, " is listed twice"));
    }
  }
  return ValidateRunFields(h);
}

// One matrix of the header, while its cells arrive.
struct Ingester::MatrixState {
  uint32_t rail = 0;
  uint64_t size_bytes = 0;
  std::shared_ptr<const std::vector<std::string>> names;
  std::vector<int64_t> ids;           // nodes.id per index
  bool verdict = false;               // the rail's largest size
  bool closed = false;
  std::vector<bool> seen;             // n x n: a cell sent twice is refused
  uint64_t cells = 0;
  std::unique_ptr<NodeStatsBuilder> stats;
  std::unique_ptr<CapacityBuilder> capacity;
  // The heatmap's matrix (the run page's first request), stored at close.
  std::unique_ptr<controller::report::MatrixBlobBuilder> blob;
  // Per reference: its cells of this matrix by (src id, dst id), and what was
  // compared (the history reference has no cells: the noise windows are its).
  struct RefCells {
    std::vector<std::pair<std::pair<int64_t, int64_t>, float>> ok;  // sorted
    std::vector<ComparedCell> compared;
  };
  std::vector<RefCells> refs;
  std::unique_ptr<LinkNoiseTable> noise;  // verdict matrices
};

Ingester::Ingester(store::Store& store, IngestOptions options) : store_(store), options_(options) {}
Ingester::~Ingester() = default;

absl::Status Ingester::Fail(absl::Status st) {
  failed_ = true;
  writer_.reset();  // rolls back
  return st;
}

absl::Status Ingester::Begin(v1::Run header) {
  if (begun_) return Bad("the header chunk came twice");
  begun_ = true;
  if (header.cluster().empty()) header.set_cluster("default");
  RETURN_IF_ERROR(ValidateHeader(header, options_));
  for (auto& b : *header.mutable_blame()) b.clear_streak();  // the server's (SetStreaks)
  header_ = std::move(header);
  ASSIGN_OR_RETURN(auto existing, store_.FindRun(header_.run_id()));
  if (existing) return SameAsStored(*existing);
  // Matrices; node names interned before the write transaction opens.
  std::map<uint32_t, uint64_t> largest;
  for (const auto& m : header_.matrices()) largest[m.rail()] = std::max(largest[m.rail()], m.size_bytes());
  for (const auto& m : header_.matrices()) {
    auto s = std::make_unique<MatrixState>();
    s->rail = m.rail();
    s->size_bytes = m.size_bytes();
    std::vector<std::string> names(m.nodes().begin(), m.nodes().end());
    if (!matrices_.empty() && *matrices_.back()->names == names) {
      s->names = matrices_.back()->names;
      s->ids = matrices_.back()->ids;
    } else {
      ASSIGN_OR_RETURN(s->ids, store_.InternNodes(names));
      s->names = std::make_shared<const std::vector<std::string>>(std::move(names));
    }
    s->verdict = largest[m.rail()] == m.size_bytes();
    by_key_[{s->rail, s->size_bytes}] = s.get();
    matrices_.push_back(std::move(s));
  }
  // References: the baseline (unless it is this run) and the last passing run.
  const int64_t started = store::ToMicros(header_.started_at());
  Reference base{v1::REGRESSION_REFERENCE_BASELINE, std::nullopt, nullptr};
  ASSIGN_OR_RETURN(auto bl, store_.GetBaseline(header_.cluster()));
  if (bl) {
    ASSIGN_OR_RETURN(base.run, store_.FindRunByKey(bl->run_key));
  }
  // Each link's own history instead of one earlier run (link_noise.h).
  Reference history{v1::REGRESSION_REFERENCE_HISTORY, std::nullopt, nullptr};
  for (Reference* r : {&base, &history}) {
    r->builder = std::make_unique<RegressionBuilder>(r->kind, r->run ? r->run->run_id : "",
                                                     options_.tolerance, options_.max_regression_links);
    r->builder->SetNoise(options_.noise);
    references_.push_back(std::move(*r));
  }
  store::RunRow row;
  row.run_id = header_.run_id();
  row.cluster = header_.cluster();
  row.started_us = started;
  row.finished_us = header_.has_finished_at() ? store::ToMicros(header_.finished_at()) : started;
  row.stored_us = store::NowMicros();
  row.mode = header_.mode();
  // Staged: nothing of the store is held while the client sends.
  auto w = store::StagedRunWriter::Create(store_, row, options_.staging_dir);
  if (!w.ok()) return Fail(w.status());
  writer_ = std::move(*w);
  return absl::OkStatus();
}

namespace {

absl::Status Reused(const store::RunRow& stored, absl::string_view differs) {
  return absl::AlreadyExistsError(absl::StrCat(
      "run ", stored.run_id, " was stored at ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMicros(stored.stored_us), absl::UTCTimeZone()),
      " with other content (", differs, "): a run id names one run; upload this one under a new id"));
}

}  // namespace

absl::Status Ingester::SameAsStored(const store::RunRow& stored) {
  ASSIGN_OR_RETURN(v1::Run kept, store_.ReadHeader(stored.key));
  kept.clear_regressions();  // the server's own, as are the blames' streaks
  for (auto& b : *kept.mutable_blame()) b.clear_streak();
  std::string field;
  google::protobuf::util::MessageDifferencer diff;
  diff.ReportDifferencesToString(&field);
  v1::Run mine = header_;
  mine.clear_regressions();
  for (auto& b : *mine.mutable_blame()) b.clear_streak();
  if (!diff.Compare(kept, mine)) {
    const std::string first_line = field.substr(0, std::min(field.find('\n'), size_t{200}));
    return Reused(stored, absl::StrCat("another header: ", first_line));
  }
  already_stored_ = true;
  stored_ = stored;
  return absl::OkStatus();
}

absl::Status Ingester::Add(const v1::RunChunk& chunk) {
  ++chunks_;
  if (!begun_) return Bad("the first chunk must be the header");
  if (already_stored_) {  // counted, to compare with the stored run at Finish
    cells_ += chunk.has_cells() ? chunk.cells().cells_size() : 0;
    pairs_ += chunk.has_pairs() ? chunk.pairs().pairs_size() : 0;
    return absl::OkStatus();
  }
  if (failed_) return absl::FailedPreconditionError("the upload already failed");
  absl::Status st;
  switch (chunk.item_case()) {
    case v1::RunChunk::kHeader: st = Bad("the header chunk came twice"); break;
    case v1::RunChunk::kCells: st = AddCells(chunk.cells()); break;
    case v1::RunChunk::kPairs: st = AddPairs(chunk.pairs()); break;
    default: st = Bad("an empty chunk (neither header, cells nor pairs)"); break;
  }
  if (!st.ok()) {
    return Fail(absl::Status(st.code(), absl::StrCat("run ", header_.run_id(), ": chunk ", chunks_, ": ", st.message())));
  }
  return st;
}

absl::Status Ingester::OpenMatrix(MatrixState& m) {
  const size_t n = m.names->size();
  m.seen.assign(n * n, false);
  if (!m.verdict) return absl::OkStatus();
  m.stats = std::make_unique<NodeStatsBuilder>(static_cast<uint32_t>(n));
  m.capacity = std::make_unique<CapacityBuilder>(m.rail, m.size_bytes, *m.names, LabelsOf(header_, m.rail, *m.names),
                                                 options_.capacity_weakest);
  m.blob = std::make_unique<controller::report::MatrixBlobBuilder>(*m.names, m.rail, m.size_bytes);
  for (const auto& hm : header_.matrices()) {
    if (hm.rail() == m.rail && hm.size_bytes() == m.size_bytes) m.blob->SetFleet(hm.fleet());
  }
  ASSIGN_OR_RETURN(auto kept, store_.ReadLinkNoise(header_.cluster(), m.rail, m.size_bytes));
  if (kept) {
    auto t = LinkNoiseTable::Decode(kept->data, options_.noise.window);
    if (!t.ok()) {
      return absl::DataLossError(absl::StrCat("link noise of cluster ", header_.cluster(), " rail ", m.rail, " size ",
                                              m.size_bytes, " B: ", t.status().message()));
    }
    m.noise = std::make_unique<LinkNoiseTable>(std::move(*t));
  } else {
    m.noise = std::make_unique<LinkNoiseTable>(options_.noise.window);
  }
  m.refs.resize(references_.size());
  for (size_t k = 0; k < references_.size(); ++k) {
    if (!references_[k].run) continue;
    store::CellQuery q;
    q.run = references_[k].run->key;
    q.rail = m.rail;
    q.size_bytes = m.size_bytes;
    auto& ok = m.refs[k].ok;
    RETURN_IF_ERROR(store_.ReadCells(q, [&](const store::CellRecord& c) {
      if (c.status == v1::RESULT_STATUS_OK) ok.push_back({{c.src, c.dst}, static_cast<float>(c.bw_avg_gbps)});
      return absl::OkStatus();
    }));
    std::sort(ok.begin(), ok.end());
  }
  return absl::OkStatus();
}

absl::Status Ingester::CloseMatrix(MatrixState& m) {
  m.closed = true;
  m.seen.clear();
  m.seen.shrink_to_fit();
  if (!m.verdict) return absl::OkStatus();
  for (const NodeStat& s : m.stats->Finish()) {
    store::NodeStatRow r;
    r.node = m.ids[s.node];
    r.rail = m.rail;
    r.size_bytes = m.size_bytes;
    r.ok_cells = s.ok_cells;
    r.low_cells = s.low_cells;
    r.failed_cells = s.failed_cells;
    r.median_gbps = s.median_gbps;
    r.tx_median_gbps = s.tx_median_gbps;
    r.rx_median_gbps = s.rx_median_gbps;
    node_stats_.push_back(r);
  }
  m.stats.reset();
  m.capacity->Finish(&capacity_);
  m.capacity.reset();
  RETURN_IF_ERROR(writer_->AddMatrixBlob(m.rail, m.size_bytes, m.blob->Finish()));
  m.blob.reset();
  for (size_t k = 0; k < references_.size(); ++k) {
    const bool history = references_[k].kind == v1::REGRESSION_REFERENCE_HISTORY;
    if ((references_[k].run && !m.refs[k].ok.empty()) || (history && !m.refs[k].compared.empty())) {
      references_[k].builder->AddRail(m.rail, m.size_bytes, m.names, m.refs[k].compared);
    }
  }
  m.refs.clear();
  m.noise->Settle();
  store::LinkNoiseRow noise{header_.cluster(), m.rail, m.size_bytes, store::ToMicros(header_.started_at()),
                            m.noise->Encode()};
  m.noise.reset();
  RETURN_IF_ERROR(writer_->SetLinkNoise(noise));
  return absl::OkStatus();
}

absl::Status Ingester::AddCells(const v1::MatrixCells& mc) {
  auto it = by_key_.find({mc.rail(), mc.size_bytes()});
  if (it == by_key_.end()) {
    return Bad(absl::StrCat("cells for rail ", mc.rail(), " size ", mc.size_bytes(),
                            " B, a matrix the header does not list"));
  }
  MatrixState& m = *it->second;
  if (open_ != &m) {
    if (m.closed) {
      return Bad(absl::StrCat("cells for rail ", m.rail, " size ", m.size_bytes,
                              " B came after another matrix's: send each matrix's cells together"));
    }
    if (open_) RETURN_IF_ERROR(CloseMatrix(*open_));
    open_ = &m;
    RETURN_IF_ERROR(OpenMatrix(m));
  }
  const uint32_t n = static_cast<uint32_t>(m.names->size());
  if (cells_ + mc.cells_size() > options_.max_cells) {
    return Bad(absl::StrCat("more than ", options_.max_cells, " cells in one run"));
  }
  for (int i = 0; i < mc.cells_size(); ++i) {
    const v1::MatrixCell& c = mc.cells(i);
    // Built only for an error: 8 M cells must not pay for a string each.
    auto where = [&] { return absl::StrCat("cell ", i, " of rail ", m.rail, " size ", m.size_bytes, " B"); };
    if (c.src() >= n || c.dst() >= n) {
      return Bad(absl::StrCat(where(), ": src ", c.src(), " or dst ", c.dst(),
                              " is not a node index of the matrix (", n, " nodes)"));
    }
    if (!v1::ResultStatus_IsValid(c.status()) || c.status() == v1::RESULT_STATUS_UNSPECIFIED) {
      return Bad(absl::StrCat(where(), ": status ", c.status(), " is not a result status"));
    }
    // A cell's only strings (RunFields.CellStringsAreTheOnesIngestChecks keeps it so).
    if (!c.verdict().empty() || !c.reason().empty()) {
      if (absl::Status st = ValidateText(c.verdict(), "verdict"); !st.ok()) return Bad(absl::StrCat(where(), ": ", st.message()));
      if (absl::Status st = ValidateText(c.reason(), "reason"); !st.ok()) return Bad(absl::StrCat(where(), ": ", st.message()));
    }
    for (double v : {c.bw_avg_gbps(), c.expected_gbps(), c.baseline_gbps()}) {
      if (!std::isfinite(v) || v < 0 || v > 1e5) {
        return Bad(absl::StrCat(where(), ": bandwidth ", v, " is not 0 to 100000 Gb/s"));
      }
    }
    if (c.reason().size() > 4096) return Bad(absl::StrCat(where(), ": reason longer than 4096 bytes"));
    CellVerdict verdict;
    if (!ParseVerdict(c.verdict(), &verdict)) {
      return Bad(absl::StrCat(where(), ": verdict '", c.verdict().substr(0, 32),
                              "' is not pass, low, fail or empty"));
    }
    const size_t cell = size_t{c.src()} * n + c.dst();
    if (m.seen[cell]) {
      return Bad(absl::StrCat(where(), ": ", (*m.names)[c.src()], "->", (*m.names)[c.dst()], " sent twice"));
    }
    m.seen[cell] = true;
    store::CellRecord r;
    r.rail = m.rail;
    r.size_bytes = m.size_bytes;
    r.src = m.ids[c.src()];
    r.dst = m.ids[c.dst()];
    r.status = c.status();
    r.bw_avg_gbps = c.bw_avg_gbps();
    r.verdict = static_cast<int>(verdict);
    r.expected_gbps = c.expected_gbps();
    r.baseline_gbps = c.baseline_gbps();
    r.reason = c.reason();
    RETURN_IF_ERROR(writer_->AddCell(r));
    if (!m.verdict) continue;
    ++verdict_cells_;
    low_ += verdict == CellVerdict::kLow;
    failed_cells_ += c.status() != v1::RESULT_STATUS_OK || verdict == CellVerdict::kFail;
    m.stats->Add(c.src(), c.dst(), c.status(), c.bw_avg_gbps(), verdict);
    m.capacity->Add(c.src(), c.dst(), c.status(), c.bw_avg_gbps(), c.expected_gbps());
    // The baseline value of the heatmap's hover: the sweep's own (--baseline), else the cell of
    // the cluster's baseline run this run is compared with (what the run page showed before).
    double baseline = c.baseline_gbps();
    CompareCell(m, c, r.src, r.dst, verdict, &baseline);
    m.blob->Add(c.src(), c.dst(), c.status(), c.bw_avg_gbps(), c.verdict(), c.expected_gbps(), baseline, c.reason());
  }
  cells_ += mc.cells_size();
  m.cells += mc.cells_size();
  return absl::OkStatus();
}

void Ingester::CompareCell(MatrixState& m, const v1::MatrixCell& c, int64_t src, int64_t dst, CellVerdict verdict,
                           double* baseline) {
  const LinkSummary link = m.noise->Find({src, dst});
  const bool ok = c.status() == v1::RESULT_STATUS_OK;
  const float now = static_cast<float>(c.bw_avg_gbps());
  const bool judged_by_history = link.history >= options_.noise.min_history;
  for (size_t k = 0; k < m.refs.size(); ++k) {
    auto& ref = m.refs[k];
    if (references_[k].kind == v1::REGRESSION_REFERENCE_HISTORY) {
      if (judged_by_history) {
        ref.compared.push_back({c.src(), c.dst(), static_cast<float>(link.median), now, ok,
                                static_cast<float>(link.noise), link.history, c.retested()});
      } else {
        references_[k].builder->CountShortHistory(link.history);
      }
      continue;
    }
    auto hit = std::lower_bound(ref.ok.begin(), ref.ok.end(), std::make_pair(std::make_pair(src, dst), -1.0f));
    if (hit == ref.ok.end() || hit->first != std::make_pair(src, dst)) continue;
    ref.compared.push_back(
        {c.src(), c.dst(), hit->second, now, ok, static_cast<float>(link.noise), link.history, c.retested()});
    if (*baseline <= 0 && references_[k].kind == v1::REGRESSION_REFERENCE_BASELINE) *baseline = hit->second;
  }
  // A passing reading teaches the link's history; a regressed one does not (link_noise.h).
  const bool regressed =
      judged_by_history && Dropped(link.median, now, Threshold(link, options_.tolerance, options_.noise));
  if (ok && now > 0 && verdict != CellVerdict::kLow && verdict != CellVerdict::kFail && !regressed) {
    m.noise->Add({src, dst}, now);
  }
}

absl::Status Ingester::AddPairs(const v1::PairChunk& chunk) {
  if (pairs_ + chunk.pairs_size() > options_.max_pairs) {
    return Bad(absl::StrCat("more than ", options_.max_pairs, " pairs in one run"));
  }
  for (int i = 0; i < chunk.pairs_size(); ++i) {
    const v1::PairResult& p = chunk.pairs(i);
    auto where = [&] { return absl::StrCat("pair ", i); };
    for (const std::string* n : {&p.src().node(), &p.dst().node()}) {
      if (!ValidNodeName(*n)) return CheckNodeName(*n, where());
    }
    if (!v1::ResultStatus_IsValid(p.status())) {
      return Bad(absl::StrCat(where(), ": status ", p.status(), " is not a result status"));
    }
    for (const auto& s : p.sizes()) {
      if (!std::isfinite(s.bw_avg_gbps()) || !std::isfinite(s.bw_peak_gbps()) || s.bw_avg_gbps() < 0) {
        return Bad(absl::StrCat(where(), ": size ", s.size_bytes(), " B: bandwidth is not a finite value >= 0"));
      }
    }
  }
  std::string bytes;
  if (!chunk.SerializeToString(&bytes)) return absl::InternalError("cannot serialize a pair chunk");
  // Their strings reach the dashboard and reports as the header's do.
  if (absl::Status st = ValidateSerializedStrings(v1::PairChunk::descriptor(), bytes); !st.ok()) {
    return Bad(absl::StrCat("the pair chunk from pair ", pairs_, ": ", st.message()));
  }
  RETURN_IF_ERROR(writer_->AddPairChunk(static_cast<uint32_t>(chunk.pairs_size()), bytes));
  pairs_ += chunk.pairs_size();
  return absl::OkStatus();
}

absl::Status Ingester::SetStreaks() {
  store::RunFilter f;
  f.cluster = header_.cluster();
  f.until_us = store::ToMicros(header_.started_at());
  f.limit = 1;
  ASSIGN_OR_RETURN(std::vector<store::RunRow> before, store_.ListRuns(f));
  std::map<std::pair<int, std::string>, uint32_t> prev;  // (regression kind, subject) -> streak
  std::map<std::pair<std::string, std::string>, uint32_t> prev_blame;  // (blame kind, subject) -> streak
  if (!before.empty()) {
    ASSIGN_OR_RETURN(v1::Run p, store_.ReadHeader(before.front().key));
    for (const auto& rep : p.regressions()) {
      for (const auto& g : rep.regressions()) {
        uint32_t& s = prev[{g.kind(), g.subject()}];
        s = std::max(s, std::max(g.streak(), 1u));
      }
    }
    for (const auto& b : p.blame()) {
      uint32_t& s = prev_blame[{b.kind(), b.subject()}];
      s = std::max(s, std::max(b.streak(), 1u));
    }
  }
  for (auto& rep : *header_.mutable_regressions()) {
    for (auto& g : *rep.mutable_regressions()) {
      auto it = prev.find({g.kind(), g.subject()});
      g.set_streak(it == prev.end() ? 1 : it->second + 1);
    }
  }
  for (auto& b : *header_.mutable_blame()) {
    auto it = prev_blame.find({b.kind(), b.subject()});
    b.set_streak(it == prev_blame.end() ? 1 : it->second + 1);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::UploadRunResponse> Ingester::Finish() {
  if (!begun_) return Bad("empty upload: no header chunk");
  v1::UploadRunResponse resp;
  if (already_stored_) {
    if (cells_ != stored_->cells || pairs_ != stored_->pairs) {
      return Reused(*stored_, absl::StrCat(cells_, " cells and ", pairs_, " pairs; it has ", stored_->cells,
                                           " and ", stored_->pairs));
    }
    resp.set_run_id(header_.run_id());
    resp.set_already_stored(true);
    resp.set_cells(cells_);
    resp.set_pairs(pairs_);
    return resp;
  }
  if (failed_) return absl::FailedPreconditionError("the upload already failed");
  if (open_) {
    if (auto st = CloseMatrix(*open_); !st.ok()) return Fail(st);
  }
  for (const auto& r : node_stats_) {
    if (auto st = writer_->AddNodeStat(r); !st.ok()) return Fail(st);
  }
  capacity_.set_acceptance_fraction(header_.policy().min_fraction_of_link());
  if (auto st = writer_->SetCapacity(capacity_.SerializeAsString()); !st.ok()) return Fail(st);
  std::set<uint32_t> rails;
  for (const auto& m : matrices_) rails.insert(m->rail);
  store::RunRow row;
  row.passed = header_.passed();
  row.summary = header_.summary();
  row.nodes = 0;
  for (const auto& m : matrices_) row.nodes = std::max<uint32_t>(row.nodes, m->names->size());
  row.rails = static_cast<uint32_t>(rails.size());
  row.cells = cells_;
  row.low_cells = low_;
  row.failed_cells = failed_cells_;
  row.verdict_cells = verdict_cells_;
  row.pairs = pairs_;
  for (auto& r : references_) {
    v1::RegressionReport rep = r.builder->Finish();
    const uint32_t found = static_cast<uint32_t>(rep.regressions_size()) + rep.links_omitted();
    if (r.kind == v1::REGRESSION_REFERENCE_BASELINE) row.baseline_regressions = found;
    if (r.kind == v1::REGRESSION_REFERENCE_LAST_PASS) row.last_pass_regressions = found;
    *header_.add_regressions() = std::move(rep);
  }
  if (auto st = SetStreaks(); !st.ok()) return Fail(st);
  *resp.mutable_regressions() = header_.regressions();
  for (const auto& b : header_.blame()) resp.add_blame_streaks(b.streak());
  if (auto st = writer_->Commit(row, header_); !st.ok()) {
    writer_.reset();
    if (!absl::IsAlreadyExists(st)) return Fail(st);
    // Stored meanwhile by another upload of the same id: the same run or not.
    ASSIGN_OR_RETURN(auto now_stored, store_.FindRun(header_.run_id()));
    if (!now_stored) return Fail(st);
    header_.clear_regressions();
    RETURN_IF_ERROR(SameAsStored(*now_stored));
    return Finish();
  }
  writer_.reset();
  spdlog::info("stored run {} ({}): {} cells, {} pairs; {}", header_.run_id(), header_.cluster(),
               cells_, pairs_, header_.regressions(0).summary());
  resp.set_run_id(header_.run_id());
  resp.set_cells(cells_);
  resp.set_pairs(pairs_);
  return resp;
}

}  // namespace gdrbench::server::history
