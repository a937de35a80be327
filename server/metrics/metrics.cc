#include "server/metrics/metrics.h"

#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "server/history/run_fields.h"

namespace gdrbench::server::metrics {
namespace {

// One family: HELP and TYPE, then its samples; families are written whole
// (the format wants a family's samples together).
class Family {
 public:
  Family(std::string name, std::string type, std::string help)
      : name_(std::move(name)), type_(std::move(type)), help_(std::move(help)) {}
  void Add(const std::string& labels, double value) {
    absl::StrAppend(&samples_, name_, labels.empty() ? "" : absl::StrCat("{", labels, "}"), " ",
                    absl::StrFormat("%.17g", value), "\n");
  }
  void AppendTo(std::string* out) const {
    absl::StrAppend(out, "# HELP ", name_, " ", help_, "\n# TYPE ", name_, " ", type_, "\n", samples_);
  }
  bool empty() const { return samples_.empty(); }

 private:
  std::string name_, type_, help_, samples_;
};

std::string L(std::initializer_list<std::pair<const char*, std::string>> kv) {
  std::string out;
  for (const auto& [k, v] : kv) {
    absl::StrAppend(&out, out.empty() ? "" : ",", k, "=\"", EscapeLabel(v), "\"");
  }
  return out;
}

constexpr double kBytesPerGbit = 1e9 / 8;

std::string ReferenceLabel(v1::RegressionReference r) {
  switch (r) {
    case v1::REGRESSION_REFERENCE_BASELINE: return "baseline";
    case v1::REGRESSION_REFERENCE_HISTORY: return "history";
    default: return "last_pass";
  }
}

std::string KindLabel(v1::RegressionKind k) {
  switch (k) {
    case v1::REGRESSION_KIND_LINK: return "link";
    case v1::REGRESSION_KIND_NODE: return "node";
    case v1::REGRESSION_KIND_NIC: return "nic";
    case v1::REGRESSION_KIND_RAIL: return "rail";
    default: return "unknown";
  }
}

}  // namespace

std::string EscapeLabel(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<std::string> Exporter::RunSeries(const store::RunRow& run) {
  GDR_ASSIGN_OR_RETURN(v1::Run header, store_.ReadHeader(run.key));
  GDR_ASSIGN_OR_RETURN(std::vector<store::NodeStatRow> stats, store_.ReadNodeStats(run.key));
  const std::string& c = run.cluster;
  Family bw("gdrbench_node_write_bandwidth_bytes_per_second", "gauge",
            "Median RDMA WRITE bandwidth (BW average) of the node's OK cells at the rail's verdict size in the "
            "cluster's newest run; direction tx: the node as initiator, rx: as target. Absent for a direction with "
            "no OK cell (a node never measured has no bandwidth, not 0).");
  Family low("gdrbench_node_low_cells", "gauge",
             "The node's cells judged low (below the absolute, fleet or baseline floor) in the newest run, per rail.");
  Family failed("gdrbench_node_failed_cells", "gauge",
                "The node's cells that did not complete OK in the newest run, per rail.");
  for (const auto& s : stats) {
    const std::string node = store_.NodeName(s.node);
    const std::string rail = absl::StrCat(s.rail);
    // A direction with no OK cell (the node left out, its tests not run or all
    // failed) has no median: no series, never a bandwidth of 0 (an OK cell
    // always moved bytes, so a median of 0 means there was none).
    if (s.tx_median_gbps > 0) {
      bw.Add(L({{"cluster", c}, {"node", node}, {"rail", rail}, {"direction", "tx"}}), s.tx_median_gbps * kBytesPerGbit);
    }
    if (s.rx_median_gbps > 0) {
      bw.Add(L({{"cluster", c}, {"node", node}, {"rail", rail}, {"direction", "rx"}}), s.rx_median_gbps * kBytesPerGbit);
    }
    low.Add(L({{"cluster", c}, {"node", node}, {"rail", rail}}), s.low_cells);
    failed.Add(L({{"cluster", c}, {"node", node}, {"rail", rail}}), s.failed_cells);
  }
  Family streak(
      "gdrbench_finding_streak", "gauge",
      "Consecutive runs of the cluster, the newest included, in which this regression finding (kind and "
      "subject: a link 'a->b', 'a<->b', a node, 'node rail R', 'rail R') was made, by reference; "
      "confirmed=\"true\" when its regressed cells read so in a retest of the same run too.");
  Family persistent(
      "gdrbench_last_run_persistent_regressions", "gauge",
      absl::StrCat("Regression findings of the newest run confirmed by a retest and made in at least ",
                   persist_runs_, " consecutive runs (--persist-runs), by reference."));
  for (const auto& rep : header.regressions()) {
    const std::string ref = ReferenceLabel(rep.reference());
    uint32_t lasting = 0;
    int listed = 0;
    for (const auto& g : rep.regressions()) {
      lasting += g.confirmed() && g.streak() >= persist_runs_;
      if (++listed > kMaxStreakSeries) continue;
      streak.Add(L({{"cluster", c},
                    {"reference", ref},
                    {"kind", KindLabel(g.kind())},
                    {"subject", g.subject()},
                    {"confirmed", g.confirmed() ? "true" : "false"}}),
                 g.streak());
    }
    persistent.Add(L({{"cluster", c}, {"reference", ref}}), lasting);
  }
  Family pf("gdrbench_preflight_failed_checks", "gauge",
            "Preflight checks that FAILed on the node in the cluster's newest run.");
  Family pfc("gdrbench_preflight_check_failed", "gauge",
             "1 for each preflight check that FAILed on the node in the newest run (absent when it passed).");
  // Only reports of the run's own nodes, one each, with valid check ids (what
  // ingest accepts; a run stored by an older server may hold others): at
  // most nodes x kMaxChecks series, every label value printable.
  const std::set<std::string> nodes = history::RunNodeNames(header);
  std::set<std::string> reported;
  for (const auto& rep : header.preflight()) {
    if (!nodes.count(rep.hostname()) || !reported.insert(rep.hostname()).second) continue;
    uint32_t fails = 0;
    int listed = 0;
    for (const auto& chk : rep.checks()) {
      if (chk.status() != v1::CHECK_STATUS_FAIL || !history::ValidCheckId(chk.id())) continue;
      if (++listed > history::kMaxChecks) break;
      ++fails;
      pfc.Add(L({{"cluster", c}, {"node", rep.hostname()}, {"check", chk.id()}}), 1);
    }
    pf.Add(L({{"cluster", c}, {"node", rep.hostname()}}), fails);
  }
  std::string out;
  for (const Family* f : {&bw, &low, &failed, &streak, &persistent, &pf, &pfc}) {
    if (!f->empty()) f->AppendTo(&out);
  }
  return out;
}

namespace {

// The families of every cluster's newest run, from the store's rows.
std::string LastRunFamilies(const std::vector<store::RunRow>& latest,
                            const std::vector<store::ClusterRow>& clusters) {
  Family ts("gdrbench_last_run_timestamp_seconds", "gauge", "When the cluster's newest stored run started (unix time).");
  Family passed("gdrbench_last_run_passed", "gauge", "1 when the cluster's newest run passed every verdict, else 0.");
  Family dur("gdrbench_last_run_duration_seconds", "gauge", "How long the cluster's newest sweep ran.");
  Family cells("gdrbench_last_run_cells", "gauge", "Cells of the newest run: all sizes (verdict all), and low and failed at the verdict sizes.");
  Family regs("gdrbench_last_run_regressions", "gauge",
              "Regression findings (links, nodes, NICs, rails) of the newest run, by reference (baseline: the "
              "baseline run; history: each link's own history; last_pass: the last passing run, runs stored "
              "before history).");
  Family runs("gdrbench_stored_runs", "gauge", "Runs of the cluster kept in the store.");
  for (const auto& r : latest) {
    const std::string& c = r.cluster;
    ts.Add(L({{"cluster", c}}), r.started_us / 1e6);
    passed.Add(L({{"cluster", c}}), r.passed ? 1 : 0);
    dur.Add(L({{"cluster", c}}), (r.finished_us - r.started_us) / 1e6);
    cells.Add(L({{"cluster", c}, {"verdict", "low"}}), static_cast<double>(r.low_cells));
    cells.Add(L({{"cluster", c}, {"verdict", "failed"}}), static_cast<double>(r.failed_cells));
    cells.Add(L({{"cluster", c}, {"verdict", "all"}}), static_cast<double>(r.cells));
    regs.Add(L({{"cluster", c}, {"reference", "baseline"}}), r.baseline_regressions);
    // The row's second count: each link's history (last_pass for runs stored before it).
    regs.Add(L({{"cluster", c}, {"reference", "history"}}), r.last_pass_regressions);
  }
  for (const auto& c : clusters) runs.Add(L({{"cluster", c.name}}), static_cast<double>(c.runs));
  std::string out;
  for (const Family* f : {&ts, &passed, &dur, &cells, &regs, &runs}) {
    if (!f->empty()) f->AppendTo(&out);
  }
  return out;
}

// The runs' texts merged per family name, in the order the names first
// appear, so a family's samples stay together across clusters.
std::string MergeFamilies(const std::vector<std::string>& parts) {
  std::map<std::string, std::string> families;  // name -> HELP/TYPE + samples
  std::vector<std::string> order;
  for (const auto& p : parts) {
    std::string name;
    size_t pos = 0;
    while (pos < p.size()) {
      size_t eol = p.find('\n', pos);
      std::string line = p.substr(pos, eol - pos + 1);
      pos = eol + 1;
      if (line.rfind("# HELP ", 0) == 0) {
        name = line.substr(7, line.find(' ', 7) - 7);
        if (!families.count(name)) {
          order.push_back(name);
          families[name] = line;
        }
        continue;
      }
      if (line.rfind("# TYPE ", 0) == 0) {
        if (families[name].find("# TYPE") == std::string::npos) families[name] += line;
        continue;
      }
      families[name] += line;
    }
  }
  std::string out;
  for (const auto& n : order) out += families[n];
  return out;
}

}  // namespace

absl::StatusOr<std::string> Exporter::Render() {
  GDR_ASSIGN_OR_RETURN(std::vector<store::RunRow> latest, store_.LatestRuns());
  GDR_ASSIGN_OR_RETURN(std::vector<store::ClusterRow> clusters, store_.Clusters());
  std::string out = LastRunFamilies(latest, clusters);
  // Per-node families, each run's text cached; merged per family name so a
  // family's samples stay together across clusters.
  std::vector<std::string> parts;
  for (const auto& r : latest) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = cache_.find(r.cluster);
    if (it == cache_.end() || it->second.first != r.key) {
      GDR_ASSIGN_OR_RETURN(std::string text, RunSeries(r));
      cache_[r.cluster] = {r.key, std::move(text)};
    }
    parts.push_back(cache_[r.cluster].second);
  }
  out += MergeFamilies(parts);
  Family queued("gdrbench_sweeps_queued", "gauge", "Sweeps waiting for the cluster (one runs at a time).");
  Family running("gdrbench_sweeps_running", "gauge", "Sweeps running on the cluster (0 or 1).");
  for (const auto& [c, load] : sweeps_.Load()) {
    queued.Add(L({{"cluster", c}}), load.first);
    running.Add(L({{"cluster", c}}), load.second);
  }
  Family uploads("gdrbench_uploads_total", "counter", "Run uploads since the server started, by result.");
  uploads.Add(L({{"result", "stored"}}), static_cast<double>(counters_.uploads_stored.load()));
  uploads.Add(L({{"result", "already_stored"}}), static_cast<double>(counters_.uploads_already_stored.load()));
  uploads.Add(L({{"result", "rejected"}}), static_cast<double>(counters_.uploads_rejected.load()));
  Family refused("gdrbench_requests_refused_total", "counter",
                 "Requests refused for a missing, unknown or read-only token since the server started.");
  refused.Add("", static_cast<double>(counters_.requests_refused.load()));
  Family shed("gdrbench_http_connections_shed_total", "counter",
              "HTTP connections closed at once since the server started: over the total or per-address limit.");
  shed.Add("", static_cast<double>(counters_.connections_shed.load()));
  for (const Family* f : {&queued, &running, &uploads, &refused, &shed}) {
    if (!f->empty()) f->AppendTo(&out);
  }
  return out;
}

}  // namespace gdrbench::server::metrics
