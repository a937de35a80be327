#include "controller/cli/server_commands.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "controller/analysis/blame.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/verdicts.h"
#include "controller/cli/cli_util.h"
#include "controller/cli/commands.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/flag_names.h"
#include "controller/cli/sweep_output.h"
#include "controller/report/report.h"
#include "controller/run/journal.h"
#include "report/capacity_report.h"
#include "report/left_out.h"

namespace gdrbench::controller::cli {
namespace {

#define ASSIGN_OR_RETURN_EXIT(lhs, expr)                   \
  auto GDR_CONCAT(_or_, __LINE__) = (expr);                \
  if (!GDR_CONCAT(_or_, __LINE__).ok()) {                  \
    return PrintError(GDR_CONCAT(_or_, __LINE__).status()); \
  }                                                        \
  lhs = std::move(GDR_CONCAT(_or_, __LINE__)).value()

std::string Time(const google::protobuf::Timestamp& t) {
  std::time_t s = t.seconds();
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

void PrintRegressions(const google::protobuf::RepeatedPtrField<v1::RegressionReport>& reps) {
  for (const auto& r : reps) {
    std::printf("regressions vs %s: %s\n",
                r.reference() == v1::REGRESSION_REFERENCE_BASELINE  ? "baseline"
                : r.reference() == v1::REGRESSION_REFERENCE_HISTORY ? "history"
                                                                    : "last pass",
                r.summary().c_str());
    for (const auto& g : r.regressions()) {
      std::printf("  %-5s %-28s %8.3g -> %-8.3g Gb/s (-%.1f%%, streak %u, %s)\n",
                  g.kind() == v1::REGRESSION_KIND_LINK   ? "link"
                  : g.kind() == v1::REGRESSION_KIND_NODE ? "node"
                  : g.kind() == v1::REGRESSION_KIND_NIC  ? "nic"
                                                         : "rail",
                  g.subject().c_str(), g.before_gbps(), g.after_gbps(), 100 * g.drop_fraction(), g.streak(),
                  g.confirmed() ? "confirmed by a retest" : "seen once");
    }
  }
}

absl::StatusOr<std::unique_ptr<ServerClient>> Connect(const ServerOptions& o) {
  return ServerClient::Create(o.client);
}

int List(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  v1::ListRunsRequest req;
  req.set_cluster(o.cluster);
  req.set_page_size(o.limit);
  req.set_passed(o.passed);
  auto r = c->ListRuns(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
    return 0;
  }
  std::printf("%-28s %-10s %-21s %-5s %7s %6s %6s %4s %4s  %s\n", "RUN", "CLUSTER", "STARTED", "PASS", "CELLS",
              "LOW", "FAILED", "REGB", "REGP", "SUMMARY");
  for (const auto& s : r->runs()) {
    std::printf("%-28s %-10s %-21s %-5s %7llu %6llu %6llu %4u %4u  %s%s\n", s.run_id().c_str(),
                s.cluster().c_str(), Time(s.started_at()).c_str(), s.passed() ? "yes" : "no",
                static_cast<unsigned long long>(s.cells()), static_cast<unsigned long long>(s.low_cells()),
                static_cast<unsigned long long>(s.failed_cells()), s.baseline_regressions(),
                s.last_pass_regressions(), s.is_baseline() ? "[baseline] " : "", s.summary().c_str());
  }
  return 0;
}

// How long ago `t` was, from `now`: "40 s", "12 min", "3.5 h", "2.1 d".
std::string Ago(const google::protobuf::Timestamp& t, std::time_t now) {
  if (t.seconds() == 0) return "-";
  const double s = std::max<double>(0, static_cast<double>(now - t.seconds()));
  if (s < 120) return absl::StrFormat("%.0f s", s);
  if (s < 7200) return absl::StrFormat("%.0f min", s / 60);
  if (s < 2 * 86400) return absl::StrFormat("%.1f h", s / 3600);
  return absl::StrFormat("%.1f d", s / 86400);
}

// The tests stored against those planned: "1,204 / 8,192 (14.7 %)".
std::string Progress(const v1::LiveRun& r) {
  const uint64_t planned = r.plan().tests_planned();
  if (planned == 0) return absl::StrCat(r.next_test(), " / ?");
  return absl::StrFormat("%u / %u (%.1f %%)", r.next_test(), planned, 100.0 * r.next_test() / planned);
}

int Live(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  auto r = c->ListLiveRuns(v1::ListLiveRunsRequest{});
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
    return 0;
  }
  if (r->runs().empty()) {
    std::printf("server %s: no sweep in progress\n", o.client.address.c_str());
    return 0;
  }
  const std::time_t now = std::time(nullptr);
  std::printf("%-28s %-10s %-10s %5s %-28s %9s %-21s %9s  %s\n", "RUN", "CLUSTER", "MODE", "NODES",
              "TESTS STORED / PLANNED", "CELLS", "OPENED", "LAST DATA", "BY");
  for (const auto& l : r->runs()) {
    std::printf("%-28s %-10s %-10s %5d %-28s %9llu %-21s %9s  %s\n", l.run_id().c_str(),
                l.plan().cluster().empty() ? "default" : l.plan().cluster().c_str(), l.plan().mode().c_str(),
                l.plan().nodes_size(), Progress(l).c_str(), static_cast<unsigned long long>(l.cells()),
                Time(l.opened_at()).c_str(), Ago(l.updated_at(), now).c_str(), l.opened_by().c_str());
  }
  return 0;
}

int Abandon(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  v1::AbandonLiveRunRequest req;
  req.set_run_id(o.run);
  auto r = c->AbandonLiveRun(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
    return 0;
  }
  std::printf(
      "server %s: live run %s dropped (%s tests had arrived); its sweep's journal still holds them: "
      "gdrbench sweep --resume finishes the run and sends it again whole\n",
      o.client.address.c_str(), r->run_id().c_str(), Progress(*r).c_str());
  return 0;
}

int Show(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  v1::GetRunRequest req;
  req.set_run_id(o.run);
  auto r = c->GetRun(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
    return 0;
  }
  std::printf("run %s (cluster %s), %s, mode %s\n%s\n", r->run_id().c_str(), r->cluster().c_str(),
              Time(r->started_at()).c_str(), r->mode().c_str(), r->summary().c_str());
  std::fputs(gdrbench::report::FormatLeftOut(*r).c_str(), stdout);
  for (const auto& b : r->blame()) std::printf("blame %s: %s\n", analysis::BlameLabel(b).c_str(), b.reason().c_str());
  PrintRegressions(r->regressions());
  return 0;
}

int Compare(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  v1::CompareRunsRequest req;
  req.set_a(o.run);
  req.set_b(o.other);
  req.set_tolerance(o.tolerance);
  req.set_page_size(o.limit);
  auto r = c->CompareRuns(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
    return 0;
  }
  std::printf("%s -> %s (tolerance %.0f%%): %llu compared, %llu dropped, %llu improved, %llu status changed, "
              "%llu only in %s, %llu only in %s\n",
              r->a().c_str(), r->b().c_str(), 100 * r->tolerance(), static_cast<unsigned long long>(r->compared()),
              static_cast<unsigned long long>(r->dropped()), static_cast<unsigned long long>(r->improved()),
              static_cast<unsigned long long>(r->status_changed()), static_cast<unsigned long long>(r->only_a()),
              r->a().c_str(), static_cast<unsigned long long>(r->only_b()), r->b().c_str());
  for (const auto& d : r->changed()) {
    std::printf("  rail %u %8llu B  %-14s -> %-14s %9.4g -> %-9.4g Gb/s  %+.1f%%\n", d.rail(),
                static_cast<unsigned long long>(d.size_bytes()), d.src().c_str(), d.dst().c_str(), d.a_gbps(),
                d.b_gbps(), 100 * d.change_fraction());
  }
  return 0;
}

int Upload(const ServerOptions& o) {
  auto run = LoadRunOrJournal(o.path);
  if (!run.ok()) return PrintError(run.status());
  auto r = UploadRun(o.client, std::move(*run), o.cluster);
  return r.ok() ? 0 : PrintError(r.status());
}

int BaselineSet(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  v1::SetBaselineRequest req;
  req.set_run_id(o.run);
  req.set_cluster(o.cluster);
  auto r = c->SetBaseline(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
  } else {
    std::printf("baseline of %s: %s\n", r->cluster().c_str(), r->run_id().c_str());
  }
  return 0;
}

// The cluster to report on: --cluster, else the server's only one.
absl::StatusOr<std::string> OnlyCluster(ServerClient& c, const std::string& given) {
  if (!given.empty()) return given;
  GDR_ASSIGN_OR_RETURN(v1::ListClustersResponse r, c.ListClusters({}));
  if (r.clusters_size() == 1) return r.clusters(0).name();
  std::string names;
  for (const auto& x : r.clusters()) absl::StrAppend(&names, names.empty() ? "" : ", ", x.name());
  return absl::InvalidArgumentError(r.clusters().empty()
                                        ? std::string("the server has no cluster yet")
                                        : absl::StrCat("the server has several clusters: give --cluster (", names, ")"));
}

int BaselineShow(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  ASSIGN_OR_RETURN_EXIT(std::string cluster, OnlyCluster(*c, o.cluster));  // as report capacity
  v1::GetBaselineRequest req;
  req.set_cluster(cluster);
  auto r = c->GetBaseline(req);
  if (!r.ok()) return PrintError(r.status());
  if (o.json) {
    PrintJson(*r);
  } else if (r->run_id().empty()) {
    std::printf("cluster %s has no baseline (gdrbench baseline set RUN)\n", r->cluster().c_str());
  } else {
    std::printf("baseline of %s: %s (set %s by %s): %s\n", r->cluster().c_str(), r->run_id().c_str(),
                Time(r->set_at()).c_str(), r->set_by().c_str(), r->run().summary().c_str());
  }
  return 0;
}

// The sweep's own closing lines, from a stored run.json: the same reports and
// counts as when the sweep wrote them (tests/integration/report_counts_test.py).
int ReportRun(const ServerOptions& o) {
  ASSIGN_OR_RETURN_EXIT(v1::Run run, report::LoadRunJson(o.path));
  auto written = report::WriteReports(run, o.out);
  if (!written.ok()) return PrintError(written.status());
  std::fputs(report::RenderMatrixText(run).c_str(), stdout);
  for (const auto& b : run.blame()) std::printf("blame %s: %s\n", analysis::BlameLabel(b).c_str(), b.reason().c_str());
  std::printf("%s\n", run.summary().c_str());
  std::fputs(gdrbench::report::FormatLeftOut(run).c_str(), stdout);
  std::printf("report: %s\n", (std::filesystem::absolute(std::filesystem::path(o.out)) / "report.html").c_str());
  return run.passed() ? kExitPassed : kExitFailed;
}

int Capacity(const ServerOptions& o) {
  auto days = ParsePeriodDays(o.period);
  if (!days.ok()) return PrintError(days.status());
  ASSIGN_OR_RETURN_EXIT(auto c, Connect(o));
  ASSIGN_OR_RETURN_EXIT(std::string cluster, OnlyCluster(*c, o.cluster));
  v1::GetCapacityReportRequest req;
  req.set_cluster(cluster);
  req.set_days(*days);
  req.set_weakest(o.weakest);
  ASSIGN_OR_RETURN_EXIT(v1::CapacityReport r, c->GetCapacityReport(req));
  if (o.json || o.format == "json") {
    PrintJson(r);
  } else if (o.format == "csv") {
    std::fputs(gdrbench::report::RenderCapacityCsv(r).c_str(), stdout);
  } else {
    std::fputs(gdrbench::report::RenderCapacityText(r).c_str(), stdout);
  }
  return 0;
}

void AddConnection(CLI::App* c, ServerOptions& o) {
  c->add_option("--server", o.client.address, "gdrbench-server's gRPC API, HOST:PORT")
      ->envname("GDRBENCH_SERVER")
      ->required();
  AddServerConnectionFlags(c, o.client, "", /*old_names=*/true);
  c->add_option("--timeout-ms", o.client.timeout_ms, "deadline of each call")->capture_default_str();
  c->add_flag("--json", o.json, "print the v1 response as JSON");
}

}  // namespace

absl::StatusOr<v1::Run> LoadRunOrJournal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoToStatus(errno, path);
  char first = 0;
  in >> first;
  if (first == '{') return report::LoadRunJson(path);
  // Streamed: each record goes into the matrices and the run once (the
  // whole journal held as well doubled the memory of a large run's upload).
  v1::Run run;
  std::unique_ptr<analysis::MatrixSet> set;
  run::JournalVisitor v;
  v.on_start = [&](const run::JournalSummary& s) {
    std::vector<std::string> names(s.header.nodes().begin(), s.header.nodes().end());
    set = std::make_unique<analysis::MatrixSet>(std::move(names), s.header.params().bidirectional());
    if (s.header.tests() > 0) run.mutable_pairs()->Reserve(static_cast<int>(s.header.tests()));
    return absl::OkStatus();
  };
  v.on_test = [&](const v1::PairResult& p, uint32_t src, uint32_t dst) {
    // The header's node list is the plan's (format 2's indices index it).
    if (src == run::kNoNodeIndex || src >= set->nodes().size() || dst >= set->nodes().size()) {
      set->Add(p);
    } else {
      set->Add(p, src, dst);
    }
    *run.add_pairs() = p;
    return absl::OkStatus();
  };
  GDR_ASSIGN_OR_RETURN(run::JournalSummary j, run::StreamJournal(path, v));
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  analysis::Outcome outcome = analysis::Judge(*set, policy, nullptr, {});
  run.set_run_id(j.header.run_id());
  *run.mutable_started_at() = j.header.started_at();
  *run.mutable_finished_at() = j.header.started_at();
  run.set_mode(j.header.mode());
  *run.mutable_params() = j.header.params();
  *run.mutable_policy() = policy;
  analysis::FillRun(*set, outcome, &run);
  analysis::FlagLinks(policy, &run);
  run.set_summary(absl::StrCat("from the journal (", run.pairs_size(), " of ", j.header.tests(),
                               " tests finished, default verdict policy): ", run.summary()));
  if (static_cast<uint64_t>(run.pairs_size()) < j.header.tests()) run.set_passed(false);
  return run;
}

absl::StatusOr<v1::UploadRunResponse> UploadRun(const ServerClientConfig& server, v1::Run run,
                                                const std::string& cluster) {
  sweep::StreamedRun whole = sweep::StreamedRun::Whole(std::move(run));
  return UploadRun(server, &whole, cluster);
}

absl::StatusOr<v1::UploadRunResponse> UploadRun(const ServerClientConfig& server, sweep::StreamedRun* run,
                                                const std::string& cluster) {
  GDR_ASSIGN_OR_RETURN(auto c, ServerClient::Create(server));
  if (!cluster.empty()) run->mutable_header()->set_cluster(cluster);
  run->mutable_header()->clear_regressions();  // the server's to compute
  GDR_ASSIGN_OR_RETURN(v1::UploadRunResponse r, c->Upload([run](const ServerClient::ChunkFn& fn) {
    return run->ForEachRunChunk({}, fn);
  }));
  if (r.already_stored()) {
    // Nothing is stored again: say where the run is, not this upload's counts.
    v1::GetRunRequest get;
    get.set_run_id(r.run_id());
    auto stored = c->GetRun(get);
    const std::string where = stored.ok() ? stored->cluster() : "";
    std::printf("server %s: run %s was already stored%s; nothing changed%s\n", server.address.c_str(),
                r.run_id().c_str(), where.empty() ? "" : absl::StrCat(" under cluster '", where, "'").c_str(),
                !where.empty() && !cluster.empty() && cluster != where
                    ? absl::StrCat(" (--cluster ", cluster, " is not applied: a run keeps the cluster it was first "
                                   "stored under)").c_str()
                    : "");
  } else {
    std::printf("server %s: run %s stored (%llu cells, %llu pairs)\n", server.address.c_str(), r.run_id().c_str(),
                static_cast<unsigned long long>(r.cells()), static_cast<unsigned long long>(r.pairs()));
  }
  PrintRegressions(r.regressions());
  return r;
}

int UploadAfterSweep(const ServerClientConfig& server, const std::string& cluster, const std::string& dir,
                     sweep::StreamedRun sweep_run, int rc) {
  const std::string path = (std::filesystem::path(dir) / "run.json").string();
  auto r = UploadRun(server, &sweep_run, cluster);
  if (!r.ok()) {
    PrintError(absl::Status(r.status().code(),
                            absl::StrCat(r.status().message(), "; the run is kept in ", path,
                                         ": store it later with gdrbench runs upload ", path, " --server ",
                                         server.address)));
    return kExitError;
  }
  v1::Run& run = *sweep_run.mutable_header();
  if (!cluster.empty()) run.set_cluster(cluster);
  *run.mutable_regressions() = r->regressions();
  // The server's streaks, so `gdrbench drain --run DIR/run.json` (the Slurm recipe) acts on a
  // blame only once it persists (controller/slurm/drain.h).
  if (r->blame_streaks_size() == run.blame_size()) {
    for (int i = 0; i < run.blame_size(); ++i) run.mutable_blame(i)->set_streak(r->blame_streaks(i));
  }
  if (auto w = WriteSweepReports(sweep_run, dir); !w.ok()) return PrintError(w.status());
  return rc;
}

absl::StatusOr<uint32_t> ParsePeriodDays(const std::string& p) {
  std::string digits = p;
  uint32_t unit = 1;
  if (!digits.empty() && (digits.back() == 'd' || digits.back() == 'w')) {
    unit = digits.back() == 'w' ? 7 : 1;
    digits.pop_back();
  }
  uint32_t n = 0;
  if (digits.empty() || !absl::SimpleAtoi(digits, &n) || n == 0 || n > 3660 / unit) {
    return absl::InvalidArgumentError(absl::StrCat("--period '", p, "' is not a period: 30d, 4w or 90 (days, up to 3660)"));
  }
  return n * unit;
}

void AddServerSubcommands(CLI::App& app, ServerOptions& o, std::function<int()>* dispatch) {
  CLI::App* runs =
      app.add_subcommand("runs", "runs kept by gdrbench-server: list, show, compare, upload, live, abandon");
  runs->require_subcommand(1);
  CLI::App* list = runs->add_subcommand("list", "the newest runs first");
  AddConnection(list, o);
  list->add_option("--cluster", o.cluster, "only this cluster's runs");
  list->add_option("--limit", o.limit, "at most this many")->capture_default_str()->check(CLI::Range(1, 1000));
  list->add_option("--passed", o.passed, "true or false: only runs that passed, or failed")
      ->check(CLI::IsMember({"true", "false"}));
  list->callback([&o, dispatch] { *dispatch = [&o] { return List(o); }; });
  CLI::App* show = runs->add_subcommand("show", "one run: summary, blame, regressions");
  AddConnection(show, o);
  show->add_option("run", o.run, "run id")->required();
  show->callback([&o, dispatch] { *dispatch = [&o] { return Show(o); }; });
  CLI::App* cmp = runs->add_subcommand("compare", "two runs cell by cell, the largest drops first");
  AddConnection(cmp, o);
  cmp->add_option("a", o.run, "the earlier run")->required();
  cmp->add_option("b", o.other, "the later run")->required();
  cmp->add_option("--tolerance", o.tolerance, "a change past this fraction counts (0: the server's)")
      ->check(CLI::Range(0.0, 0.99));
  cmp->add_option("--limit", o.limit, "changed cells to list")->capture_default_str()->check(CLI::Range(1, 10000));
  cmp->callback([&o, dispatch] { *dispatch = [&o] { return Compare(o); }; });
  CLI::App* live =
      runs->add_subcommand("live", "the sweeps in progress that stream their tests to the server");
  AddConnection(live, o);
  live->callback([&o, dispatch] { *dispatch = [&o] { return Live(o); }; });
  CLI::App* abandon = runs->add_subcommand(
      "abandon",
      "drop a sweep's live run that will not finish (its journal keeps the tests; needs a write token)");
  AddConnection(abandon, o);
  abandon->add_option("run", o.run, "run id (gdrbench runs live)")->required();
  abandon->callback([&o, dispatch] { *dispatch = [&o] { return Abandon(o); }; });
  CLI::App* up = runs->add_subcommand("upload", "store a run.json, or the run in a sweep's journal (idempotent)");
  AddConnection(up, o);
  up->add_option("path", o.path, "run.json, or journal.bin of a sweep")->required()->check(CLI::ExistingFile);
  up->add_option("--cluster", o.cluster, "the cluster it belongs to (default: the run's, else 'default')");
  up->callback([&o, dispatch] { *dispatch = [&o] { return Upload(o); }; });

  CLI::App* base = app.add_subcommand("baseline", "the run each new run of a cluster is compared with");
  base->require_subcommand(1);
  CLI::App* set = base->add_subcommand("set", "make a stored run its cluster's baseline");
  AddConnection(set, o);
  set->add_option("run", o.run, "run id")->required();
  set->add_option("--cluster", o.cluster, "the run's cluster (default: the run's own)");
  set->callback([&o, dispatch] { *dispatch = [&o] { return BaselineSet(o); }; });
  CLI::App* get = base->add_subcommand("show", "a cluster's baseline");
  AddConnection(get, o);
  get->add_option("--cluster", o.cluster, "cluster name (default: the server's only cluster)");
  get->callback([&o, dispatch] { *dispatch = [&o] { return BaselineShow(o); }; });

  CLI::App* rep = app.add_subcommand(
      "report", "a run's reports again from its run.json, or what gdrbench-server computes over a cluster's history");
  rep->require_subcommand(1);
  CLI::App* again = rep->add_subcommand(
      "run", "write a run's reports (report.html, summary.md, pairs.csv, junit.xml, run.json) from its run.json; "
             "exit 1 when it did not pass");
  again->add_option("run", o.path, "run.json of a sweep")->required()->check(CLI::ExistingFile);
  again->add_option("--out", o.out, "folder for the reports")->required();
  again->callback([&o, dispatch] { *dispatch = [&o] { return ReportRun(o); }; });
  CLI::App* cap = rep->add_subcommand(
      "capacity", "per rail and leaf group: delivered bandwidth against the link rate, trend, weakest links");
  AddConnection(cap, o);
  cap->add_option("--cluster", o.cluster, "cluster name (default: the server's only cluster)");
  cap->add_option("--period", o.period, "the last 30d, 4w, 90 (days)")->capture_default_str();
  cap->add_option("--format", o.format, "text (for a terminal or a mail), csv, json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
  cap->add_option("--weakest", o.weakest, "weakest links to list")->capture_default_str()->check(CLI::Range(1, 1000));
  cap->callback([&o, dispatch] { *dispatch = [&o] { return Capacity(o); }; });
}

}  // namespace gdrbench::controller::cli
