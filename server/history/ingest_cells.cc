// The Ingester's matrices: each opened when its first cell arrives, its
// cells stored, judged against the references and the link's noise, and
// closed into its blob, node stats and capacity rows; then the links'
// streaks.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/history/ingest.h"
#include "server/history/ingest_matrix.h"
#include "server/history/names.h"
#include "server/history/run_fields.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::history {
namespace {

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

}  // namespace

absl::Status Ingester::OpenMatrix(MatrixState& m) {
  const size_t n = m.names->size();
  m.seen.assign(n * n, false);
  if (!m.verdict) return absl::OkStatus();
  m.stats = std::make_unique<NodeStatsBuilder>(static_cast<uint32_t>(n));
  m.capacity = std::make_unique<CapacityBuilder>(
      m.rail, m.size_bytes, *m.names, LabelsOf(header_, m.rail, *m.names), options_.capacity_weakest);
  m.blob = std::make_unique<report::MatrixBlobBuilder>(*m.names, m.rail, m.size_bytes);
  for (const auto& hm : header_.matrices()) {
    if (hm.rail() == m.rail && hm.size_bytes() == m.size_bytes) m.blob->SetFleet(hm.fleet());
  }
  GDR_ASSIGN_OR_RETURN(auto kept, store_.ReadLinkNoise(header_.cluster(), m.rail, m.size_bytes));
  if (kept) {
    auto t = LinkNoiseTable::Decode(kept->data, options_.noise.window);
    if (!t.ok()) {
      return absl::DataLossError(absl::StrCat("link noise of cluster ", header_.cluster(), " rail ", m.rail,
                                              " size ", m.size_bytes, " B: ", t.status().message()));
    }
    m.noise = std::make_unique<LinkNoiseTable>(std::move(*t));
  } else {
    m.noise = std::make_unique<LinkNoiseTable>(options_.noise.window);
  }
  m.noise->Reserve(std::min<size_t>(n * n, size_t{1} << 22));  // a reading per cell at most
  m.refs.resize(references_.size());
  for (size_t k = 0; k < references_.size(); ++k) {
    if (!references_[k].run) continue;
    store::CellQuery q;
    q.run = references_[k].run->key;
    q.rail = m.rail;
    q.size_bytes = m.size_bytes;
    auto& ok = m.refs[k].ok;
    GDR_RETURN_IF_ERROR(store_.ReadCells(q, [&](const store::CellRecord& c) {
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
  GDR_RETURN_IF_ERROR(writer_->AddMatrixBlob(m.rail, m.size_bytes, m.blob->Finish()));
  m.blob.reset();
  for (size_t k = 0; k < references_.size(); ++k) {
    const bool history = references_[k].kind == v1::REGRESSION_REFERENCE_HISTORY;
    if ((references_[k].run && !m.refs[k].ok.empty()) || (history && !m.refs[k].compared.empty())) {
      references_[k].builder->AddRail(m.rail, m.size_bytes, m.names, m.refs[k].compared);
    }
  }
  m.refs.clear();
  // Stored and dropped: merged into the encoding, never settled into a table.
  store::LinkNoiseRow noise{header_.cluster(), m.rail, m.size_bytes, store::ToMicros(header_.started_at()),
                            m.noise->EncodeWithPending()};
  m.noise.reset();
  GDR_RETURN_IF_ERROR(writer_->SetLinkNoise(noise));
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
    if (open_) GDR_RETURN_IF_ERROR(CloseMatrix(*open_));
    open_ = &m;
    GDR_RETURN_IF_ERROR(OpenMatrix(m));
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
      if (absl::Status st = ValidateText(c.verdict(), "verdict"); !st.ok())
        return Bad(absl::StrCat(where(), ": ", st.message()));
      if (absl::Status st = ValidateText(c.reason(), "reason"); !st.ok())
        return Bad(absl::StrCat(where(), ": ", st.message()));
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
    GDR_RETURN_IF_ERROR(writer_->AddCell(r));
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
    m.blob->Add(c.src(), c.dst(), c.status(), c.bw_avg_gbps(), c.verdict(), c.expected_gbps(), baseline,
                c.reason());
  }
  cells_ += mc.cells_size();
  m.cells += mc.cells_size();
  return absl::OkStatus();
}

void Ingester::CompareCell(MatrixState& m, const v1::MatrixCell& c, int64_t src, int64_t dst,
                           CellVerdict verdict, double* baseline) {
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
    auto hit =
        std::lower_bound(ref.ok.begin(), ref.ok.end(), std::make_pair(std::make_pair(src, dst), -1.0f));
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

absl::Status Ingester::SetStreaks() {
  store::RunFilter f;
  f.cluster = header_.cluster();
  f.until_us = store::ToMicros(header_.started_at());
  f.limit = 1;
  GDR_ASSIGN_OR_RETURN(std::vector<store::RunRow> before, store_.ListRuns(f));
  std::map<std::pair<int, std::string>, uint32_t> prev;                // (regression kind, subject) -> streak
  std::map<std::pair<std::string, std::string>, uint32_t> prev_blame;  // (blame kind, subject) -> streak
  if (!before.empty()) {
    GDR_ASSIGN_OR_RETURN(v1::Run p, store_.ReadHeader(before.front().key));
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

}  // namespace gdrbench::server::history
