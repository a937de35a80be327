// The terminal matrix and the Markdown summary.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/report/report.h"
#include "report/coverage.h"
#include "report/lane.h"
#include "report/left_out.h"
#include "report/report_util.h"

namespace gdrbench::controller::report {
namespace {

using gdrbench::report::FormatLeftOut;
using gdrbench::report::Gbps;
using gdrbench::report::LaneName;
using gdrbench::report::LaneTitle;
using gdrbench::report::LockstepNote;
using gdrbench::report::MatrixSizeName;
using gdrbench::report::NodeRows;
using gdrbench::report::PreflightProblems;
using gdrbench::report::RegressionKindName;
using gdrbench::report::RegressionReferenceName;
using gdrbench::report::SizeName;
using gdrbench::report::TestedMemory;
using gdrbench::report::VerdictMatrices;

std::string CellText(const v1::MatrixCell& c) {
  switch (c.status()) {
    case v1::RESULT_STATUS_OK:
      // "!": passed, but the link counters flagged it (analysis/link_flags.h).
      return absl::StrCat(Gbps(c.bw_avg_gbps()), c.verdict() == "low" ? "*" : "",
                          c.verdict() == "pass" && !c.reason().empty() ? "!" : "");
    case v1::RESULT_STATUS_FAILED: return "FAIL";
    case v1::RESULT_STATUS_ERROR: return "ERR";
    case v1::RESULT_STATUS_SKIPPED: return "not run";  // its node was left out (issue 32: one word)
    default: return "?";
  }
}

// One grid per verdict matrix: rows = sources, columns = targets.
std::vector<std::vector<std::string>> Grid(const v1::BandwidthMatrix& m) {
  const size_t n = m.nodes_size();
  std::vector<std::vector<std::string>> g(n + 1, std::vector<std::string>(n + 1));
  g[0][0] = "src\\dst";
  for (size_t i = 0; i < n; ++i) {
    g[0][i + 1] = m.nodes(i);
    g[i + 1][0] = m.nodes(i);
    for (size_t j = 0; j < n; ++j) g[i + 1][j + 1] = i == j ? "-" : ".";
  }
  for (const auto& c : m.cells()) g[c.src() + 1][c.dst() + 1] = CellText(c);
  return g;
}

// Incast rows: target, rail, round, size, fan-in, sum / expected, verdict,
// then "sender Gb/s" per sender ('*' low, FAIL/ERR/not run without a value).
std::vector<std::vector<std::string>> IncastRows(const v1::Run& run) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"target", "rail", "round", "size", "K", "sum Gb/s", "expected", "of exp.", "verdict", "senders (Gb/s)"});
  for (const auto& t : run.incast()) {
    std::string senders;
    for (const auto& s : t.senders()) {
      std::string v = s.status() == v1::RESULT_STATUS_OK
                          ? absl::StrCat(Gbps(s.bw_avg_gbps()), s.verdict() == "low" ? "*" : "")
                          : (s.status() == v1::RESULT_STATUS_SKIPPED ? "not run"
                             : s.status() == v1::RESULT_STATUS_ERROR ? "ERR"
                                                                     : "FAIL");
      absl::StrAppend(&senders, senders.empty() ? "" : " ", s.node(), " ", v);
    }
    rows.push_back({t.node(), absl::StrCat(t.rail()), absl::StrCat(t.round()), SizeName(t.size_bytes()),
                    absl::StrCat(t.fan_in()), Gbps(t.aggregate_gbps()),
                    t.expected_gbps() > 0 ? Gbps(t.expected_gbps()) : "?",
                    t.expected_gbps() > 0 ? absl::StrFormat("%.0f%%", 100 * t.fraction_of_link()) : "?",
                    t.verdict().empty() ? "-" : t.verdict(), senders});
  }
  return rows;
}

// One memory kind's value on a pair: "12.3" (BW average at its largest OK
// size; gpu-staged: "11.0/8.3", wire / copy + wire), or FAIL/ERR/not run.
std::string KindCell(const v1::PairResult& h) {
  if (h.status() != v1::RESULT_STATUS_OK) {
    return h.status() == v1::RESULT_STATUS_SKIPPED ? "not run" : h.status() == v1::RESULT_STATUS_ERROR ? "ERR" : "FAIL";
  }
  const v1::SizeResult* last = nullptr;
  for (const auto& s : h.sizes()) {
    if (s.status() == v1::RESULT_STATUS_OK && (last == nullptr || s.size_bytes() > last->size_bytes())) last = &s;
  }
  if (last == nullptr) return "?";
  if (last->staged_bw_avg_gbps() > 0) {
    return absl::StrCat(Gbps(last->bw_avg_gbps()), "/", Gbps(last->staged_bw_avg_gbps()));
  }
  return Gbps(last->bw_avg_gbps());
}

std::string Kind(const std::string& spec) { return spec.substr(0, spec.find(':')); }

// --memory lists: a row per pair: src, dst, rail, each kind's value, then
// gpu/host and gpu-staged/host ("-" when not measured).
std::vector<std::vector<std::string>> MemoryKindRows(const v1::Run& run) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : run.pairs()) {
    if (p.memory_halves().empty()) continue;
    if (rows.empty()) {
      rows.push_back({"src", "dst", "rail", Kind(p.src().memory())});
      for (const auto& h : p.memory_halves()) rows[0].push_back(Kind(h.src().memory()));
      rows[0].push_back("gpu/host");
      rows[0].push_back("staged/host");
    }
    std::vector<std::string> row = {p.src().node(), p.dst().node(), absl::StrCat(p.rail()), KindCell(p)};
    for (const auto& h : p.memory_halves()) row.push_back(KindCell(h));
    row.push_back(p.gpu_host_ratio() > 0 ? absl::StrFormat("%.2f", p.gpu_host_ratio()) : "-");
    row.push_back(p.staged_host_ratio() > 0 ? absl::StrFormat("%.2f", p.staged_host_ratio()) : "-");
    rows.push_back(std::move(row));
  }
  return rows;
}

constexpr char kMemoryKindsTitle[] =
    "memory kinds per pair, back to back on the same NICs: BW average, Gb/s, at each kind's largest OK "
    "size (gpu-staged: wire/copy+wire); the matrices show the first kind";

}  // namespace

std::string RenderMemoryKindsText(const v1::Run& run) {
  auto rows = MemoryKindRows(run);
  if (rows.empty()) return "";
  std::string out = absl::StrCat(kMemoryKindsTitle, "\n");
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t j = 0; j < row.size() && j < w.size(); ++j) w[j] = std::max(w[j], row[j].size());
  }
  for (const auto& row : rows) {
    for (size_t j = 0; j < row.size() && j < w.size(); ++j) {
      absl::StrAppend(&out, j ? "  " : "", std::string(w[j] - row[j].size(), ' '), row[j]);
    }
    out += "\n";
  }
  return out + "\n";
}

std::string RenderIncastText(const v1::Run& run) {
  if (run.incast().empty()) return "";
  std::string out =
      "incast: per target, the sum of its K senders' BW average (expected: the senders' fair shares, "
      "port / K each)\n";
  auto rows = IncastRows(run);
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t j = 0; j + 1 < row.size(); ++j) w[j] = std::max(w[j], row[j].size());
  }
  for (const auto& row : rows) {
    for (size_t j = 0; j < row.size(); ++j) {
      const size_t pad = j + 1 < row.size() ? w[j] - row[j].size() : 0;
      absl::StrAppend(&out, j ? "  " : "", j == 0 ? "" : std::string(pad, ' '), row[j],
                      j == 0 ? std::string(pad, ' ') : "");
    }
    out += "\n";
  }
  return out + "\n";
}

namespace {

// Tests that passed (or were low) while their link flapped, erred or
// retransmitted, with both ports' counters that changed.
std::string FlaggedLinks(const v1::Run& run) {
  std::string out;
  for (const auto& p : run.pairs()) {
    if (p.link_flag().empty()) continue;
    absl::StrAppend(&out, "- ", p.src().node(), " -> ", p.dst().node(), " rail ", p.rail(), ": ",
                    p.link_flag(), "\n");
    for (const auto* pc : {&p.src_counters(), &p.dst_counters()}) {
      if (pc->changes().empty()) continue;
      absl::StrAppend(&out, "  - ", pc == &p.src_counters() ? p.src().node() : p.dst().node(), " ",
                      DescribePortCounters(*pc), "\n");
    }
  }
  return out;
}

// A Markdown table: the first row is the header.
void AppendMarkdownTable(const std::vector<std::vector<std::string>>& rows, std::string* out) {
  for (size_t i = 0; i < rows.size(); ++i) {
    *out += "|";
    for (const auto& c : rows[i]) absl::StrAppend(out, " ", c, " |");
    *out += "\n";
    if (i == 0) {
      *out += "|";
      for (size_t j = 0; j < rows[i].size(); ++j) *out += "---|";
      *out += "\n";
    }
  }
}

}  // namespace

std::string RenderMatrixText(const v1::Run& run) {
  std::string out;
  for (const auto* m : VerdictMatrices(run)) {
    absl::StrAppend(&out, LaneName(*m), ", ", MatrixSizeName(*m),
                    ": BW average, Gb/s (* low, ! pass but flagged by link counters, "
                    "FAIL/ERR/not run no value, . not tested)\n");
    auto g = Grid(*m);
    std::vector<size_t> w(g[0].size(), 0);
    for (const auto& row : g) {
      for (size_t j = 0; j < row.size(); ++j) w[j] = std::max(w[j], row[j].size());
    }
    for (const auto& row : g) {
      for (size_t j = 0; j < row.size(); ++j) {
        absl::StrAppend(&out, j ? "  " : "", std::string(w[j] - row[j].size(), ' '), row[j]);
      }
      out += "\n";
    }
    out += "\n";
  }
  if (std::string note = LockstepNote(run); !note.empty()) absl::StrAppend(&out, note, "\n");
  return out + RenderIncastText(run) + RenderMemoryKindsText(run);
}

namespace {

// The title, verdict, the causes of nodes left out, and the sweep's mode,
// memory and policy.
void AppendMarkdownHeader(const v1::Run& run, std::string& out) {
  out = absl::StrCat("# gdrbench sweep ", run.run_id(), "\n\n");
  absl::StrAppend(&out, "**", run.passed() ? "PASS" : "FAIL", "** — ", run.summary(), "\n\n");
  // Nodes left out: each cause once, with its count and remedy, first
  // (the per-node reasons are in "Nodes left out", folded).
  if (std::string causes = FormatLeftOut(run); !causes.empty()) {
    for (const auto& line : absl::StrSplit(absl::StripTrailingAsciiWhitespace(causes), '\n')) {
      const absl::string_view l = absl::StripLeadingAsciiWhitespace(line);
      absl::StrAppend(&out, absl::StartsWith(l, "remedy: ") ? "  - " : "- ", l, "\n");
    }
    out += "\n";
  }
  const auto vms = VerdictMatrices(run);
  absl::StrAppend(&out, "- mode: ", run.mode(), ", nodes: ", vms.empty() ? 0 : vms[0]->nodes_size(),
                  ", pair tests: ", run.pairs_size(), "\n");
  absl::StrAppend(&out, "- ", TestedMemory(run),
                  run.params().bidirectional() ? "; bidirectional" : "; one direction per test", "\n");
  if (run.has_coverage()) {  // --mode cover | shift
    absl::StrAppend(&out, "- fabric ", run.coverage().topology(), ": ",
                    gdrbench::report::CoverageText(run.coverage()), "\n");
    for (const std::string& gap : gdrbench::report::CoverageGapLines(run.coverage(), 20)) {
      absl::StrAppend(&out, "  - not measured: ", gap, "\n");
    }
    for (const std::string& f : gdrbench::report::CounterFindingLines(run.coverage(), 20)) {
      absl::StrAppend(&out, "  - switch counters: ", f, "\n");
    }
  }
  if (std::string note = LockstepNote(run); !note.empty()) absl::StrAppend(&out, "- ", note, "\n");
  const auto& p = run.policy();
  absl::StrAppend(&out, "- verdicts: pass >= ", absl::StrFormat("%.0f", 100 * p.min_fraction_of_link()),
                  " % of link rate; fleet-relative k = ", p.mad_k(), " x MAD and -",
                  absl::StrFormat("%.0f", 100 * p.fleet_min_drop()), " %",
                  p.baseline_run().empty() ? "" : absl::StrCat("; baseline ", p.baseline_run(), " -",
                                                               100 * p.baseline_tolerance(), " %"),
                  p.ignore_link_counters()
                      ? "; link counters not judged"
                      : absl::StrCat("; flagged: link counters growing, retransmissions above ",
                                     absl::StrFormat("%g", 100 * p.max_retransmit_fraction()),
                                     " % of packets"),
                  "\n\n");
}

// The nodes' software, the nodes left out, the links flagged and the blame.
void AppendMarkdownNodes(const v1::Run& run, std::string& out) {
  if (auto rows = NodeRows(run); !rows.empty()) {
    out += "## Nodes\n\n| node | host | kernel | NVIDIA driver | CUDA | rdma-core / OFED | HCA firmware | preflight |\n"
           "|---|---|---|---|---|---|---|---|\n";
    auto cell = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
    for (const auto& r : rows) {
      absl::StrAppend(&out, "| ", r.name, " | ", cell(r.host), " | ", cell(r.kernel), " | ", cell(r.driver), " | ",
                      cell(r.cuda), " | ", cell(r.rdma), " | ", cell(r.firmware), " | ", cell(r.preflight), " |\n");
    }
    out += "\n";
  }
  if (!run.excluded_nodes().empty()) {
    absl::StrAppend(&out, "## Nodes left out\n\n<details><summary>", run.excluded_nodes_size(),
                    " node(s), each with its reason</summary>\n\n");
    for (const auto& e : run.excluded_nodes()) absl::StrAppend(&out, "- ", e, "\n");
    out += "\n</details>\n\n";
  }
  if (std::string flagged = FlaggedLinks(run); !flagged.empty()) {
    absl::StrAppend(&out, "## Links flagged by their counters\n\n", flagged, "\n_", kPortCountersCaveat, "._\n\n");
  }
  if (!run.blame().empty()) {
    out += "## Blame\n\n| kind | subject | evidence Gb/s | reason |\n|---|---|---|---|\n";
    for (const auto& b : run.blame()) {
      absl::StrAppend(&out, "| ", b.kind(), " | ", b.subject(), " | ", Gbps(b.evidence_gbps()), " | ",
                      b.reason(), " |\n");
    }
    out += "\n";
  }
}

// Regressions (filled in by gdrbench-server when it stored the run), the
// verdict matrices, incast and memory kinds.
void AppendMarkdownResults(const v1::Run& run, std::string& out) {
  for (const auto& r : run.regressions()) {
    absl::StrAppend(&out, "## Regressions against ", RegressionReferenceName(r.reference()),
                    r.reference_run_id().empty() ? "" : absl::StrCat(" (", r.reference_run_id(), ")"), "\n\n",
                    r.summary(), "\n\n");
    if (r.regressions().empty()) continue;
    out += "| kind | subject | before Gb/s | after Gb/s | drop | reason |\n|---|---|---|---|---|---|\n";
    for (const auto& g : r.regressions()) {
      absl::StrAppend(&out, "| ", RegressionKindName(g.kind()), " | ", g.subject(), " | ",
                      Gbps(g.before_gbps()), " | ", Gbps(g.after_gbps()), " | ",
                      absl::StrFormat("%.1f%%", 100 * g.drop_fraction()), " | ", g.reason(), " |\n");
    }
    out += "\n";
  }
  for (const auto* m : VerdictMatrices(run)) {
    absl::StrAppend(&out, "## ", LaneTitle(*m), ", ", MatrixSizeName(*m), " (Gb/s)\n\n");
    AppendMarkdownTable(Grid(*m), &out);
    absl::StrAppend(&out, "\nfleet: median ", Gbps(m->fleet().median_gbps()), ", min ",
                    Gbps(m->fleet().min_gbps()), ", max ", Gbps(m->fleet().max_gbps()), " Gb/s; ",
                    m->fleet().bad_cells(), " failed, ", m->fleet().low_cells(), " low\n\n");
  }
  if (!run.incast().empty()) {
    out += "## Incast (per target: the sum of its K senders, Gb/s)\n\n";
    AppendMarkdownTable(IncastRows(run), &out);
    out += "\n";
  }
  if (auto rows = MemoryKindRows(run); !rows.empty()) {
    absl::StrAppend(&out, "## Memory kinds\n\n", kMemoryKindsTitle, ".\n\n");
    AppendMarkdownTable(rows, &out);
    out += "\n";
  }
}

}  // namespace

std::string RenderMarkdown(const v1::Run& run) {
  std::string out;
  AppendMarkdownHeader(run, out);
  AppendMarkdownNodes(run, out);
  AppendMarkdownResults(run, out);
  std::string failing;
  for (const auto* m : VerdictMatrices(run)) {
    for (const auto& c : m->cells()) {
      if (c.verdict() == "pass") continue;
      absl::StrAppend(&failing, "- ", m->nodes(c.src()), " -> ", m->nodes(c.dst()), " ", LaneName(*m), ": ",
                      c.verdict(), " — ", c.reason(), "\n");
    }
  }
  if (!failing.empty()) absl::StrAppend(&out, "## Failing cells\n\n", failing, "\n");
  auto problems = PreflightProblems(run);
  if (!problems.empty()) {
    out += "## Preflight findings\n\n";
    for (const auto& [node, list] : problems) {
      for (const auto& l : list) absl::StrAppend(&out, "- ", node, ": ", l, "\n");
    }
  }
  return out;
}

}  // namespace gdrbench::controller::report
