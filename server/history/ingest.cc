#include "server/history/ingest.h"
#include "server/history/ingest_matrix.h"
#include "server/history/names.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status.h"
#include "google/protobuf/util/message_differencer.h"
#include "report/matrix_blob.h"
#include "server/history/run_fields.h"
#include "server/store/staged_run.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::history {
namespace {

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

}  // namespace

absl::Status ValidateHeader(const v1::Run& h, const IngestOptions& o) {
  GDR_RETURN_IF_ERROR(CheckRunId(h.run_id(), "run_id"));
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
      GDR_RETURN_IF_ERROR(CheckNodeName(n, mw));
      if (!names.insert(n).second) return Bad(absl::StrCat(mw, ": node ", n, " is listed twice"));
    }
  }
  return ValidateRunFields(h);
}


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
  GDR_RETURN_IF_ERROR(ValidateHeader(header, options_));
  for (auto& b : *header.mutable_blame()) b.clear_streak();  // the server's (SetStreaks)
  header_ = std::move(header);
  GDR_ASSIGN_OR_RETURN(auto existing, store_.FindRun(header_.run_id()));
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
      GDR_ASSIGN_OR_RETURN(s->ids, store_.InternNodes(names));
      s->names = std::make_shared<const std::vector<std::string>>(std::move(names));
    }
    s->verdict = largest[m.rail()] == m.size_bytes();
    by_key_[{s->rail, s->size_bytes}] = s.get();
    matrices_.push_back(std::move(s));
  }
  // References: the baseline (unless it is this run) and the last passing run.
  const int64_t started = store::ToMicros(header_.started_at());
  Reference base{v1::REGRESSION_REFERENCE_BASELINE, std::nullopt, nullptr};
  GDR_ASSIGN_OR_RETURN(auto bl, store_.GetBaseline(header_.cluster()));
  if (bl) {
    GDR_ASSIGN_OR_RETURN(base.run, store_.FindRunByKey(bl->run_key));
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
  GDR_ASSIGN_OR_RETURN(v1::Run kept, store_.ReadHeader(stored.key));
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

std::optional<absl::Status> Ingester::Admit(uint64_t cells,
                                            const std::function<absl::StatusOr<uint64_t>()>& pairs) {
  ++chunks_;
  if (!begun_) return Bad("the first chunk must be the header");
  if (already_stored_) {  // counted, to compare with the stored run at Finish
    absl::StatusOr<uint64_t> n = pairs();
    if (!n.ok()) return Named(n.status());
    cells_ += cells;
    pairs_ += *n;
    return absl::OkStatus();
  }
  if (failed_) return absl::FailedPreconditionError("the upload already failed");
  return std::nullopt;
}

absl::Status Ingester::Named(absl::Status st) {
  if (st.ok()) return st;
  return Fail(absl::Status(st.code(),
                           absl::StrCat("run ", header_.run_id(), ": chunk ", chunks_, ": ", st.message())));
}

absl::Status Ingester::Add(const v1::RunChunk& chunk) {
  const uint64_t cells = chunk.has_cells() ? chunk.cells().cells_size() : 0;
  if (auto done =
          Admit(cells, [&] { return uint64_t(chunk.has_pairs() ? chunk.pairs().pairs_size() : 0); })) {
    return *done;
  }
  switch (chunk.item_case()) {
    case v1::RunChunk::kHeader: return Named(Bad("the header chunk came twice"));
    case v1::RunChunk::kCells: return Named(AddCells(chunk.cells()));
    case v1::RunChunk::kPairs: {
      absl::StatusOr<uint32_t> n = CheckPairChunk(chunk.pairs(), pairs_);
      if (!n.ok()) return Named(n.status());
      std::string bytes;
      if (!chunk.pairs().SerializeToString(&bytes))
        return Named(absl::InternalError("cannot serialize a pair chunk"));
      return Named(StagePairs(*n, bytes));
    }
    default: return Named(Bad("an empty chunk (neither header, cells nor pairs)"));
  }
}

absl::Status Ingester::AddSerializedPairs(absl::string_view chunk) {
  if (auto done = Admit(0, [&]() -> absl::StatusOr<uint64_t> { return pair_check_.Check(chunk, pairs_); })) {
    return *done;
  }
  absl::StatusOr<uint32_t> n = pair_check_.Check(chunk, pairs_);
  if (!n.ok()) return Named(n.status());
  return Named(StagePairs(*n, chunk));
}

// Staged as received, compressed (store/staged_run.h).
absl::Status Ingester::StagePairs(uint32_t n, absl::string_view serialized) {
  if (pairs_ + n > options_.max_pairs) {
    return Bad(absl::StrCat("more than ", options_.max_pairs, " pairs in one run"));
  }
  GDR_RETURN_IF_ERROR(writer_->AddPairChunk(n, std::string_view(serialized.data(), serialized.size())));
  pairs_ += n;
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
    GDR_ASSIGN_OR_RETURN(auto now_stored, store_.FindRun(header_.run_id()));
    if (!now_stored) return Fail(st);
    header_.clear_regressions();
    GDR_RETURN_IF_ERROR(SameAsStored(*now_stored));
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
