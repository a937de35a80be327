#include "controller/cli/sweep_command.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "controller/analysis/blame.h"
#include "controller/cli/cli_util.h"
#include "controller/cli/dry_run_text.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/server_commands.h"
#include "controller/cli/slurm_exec.h"
#include "controller/cli/sweep_conflicts.h"
#include "controller/cli/sweep_output.h"
#include "controller/inventory/inventory.h"
#include "controller/report/report.h"
#include "controller/server_client/live_upload.h"
#include "controller/sweep/spec.h"
#include "controller/sweep/sweep.h"
#include "controller/topology/load.h"
#include "report/left_out.h"

namespace gdrbench::controller::cli {
namespace {

absl::Status Usage(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

absl::StatusOr<inventory::Inventory> LoadNodes(const SweepOptions& o) {
  if (!o.inventory.empty()) return LoadInventoryForCli(o.inventory);
  if (!o.agents.empty()) return inventory::InventoryFromAgents(o.agents, o.port);
  return inventory::InventoryFromHostlist(o.hostlist, o.port);
}

absl::StatusOr<std::string> ReadText(const std::string& path, absl::string_view what) {
  std::ifstream in(path);
  if (!in) return UsageIfUnreadable(ErrnoToStatus(errno, absl::StrCat(what, " ", path)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The per-test costs of an earlier run: --estimate-from (an error when it
// cannot be used), else the run.json a previous sweep left in --out (quietly
// none when there is no usable one).
absl::StatusOr<std::optional<sweep::MeasuredCost>> MeasuredFrom(const SweepOptions& o) {
  std::string path = o.estimate_from;
  const bool explicit_file = !path.empty();
  if (!explicit_file && !o.out.empty()) {
    path = (std::filesystem::path(o.out) / "run.json").string();
    if (!std::filesystem::exists(path)) return std::nullopt;
  }
  if (path.empty()) return std::nullopt;
  auto run = report::LoadRunJson(path);
  if (!run.ok()) {
    if (!explicit_file) return std::nullopt;
    return UsageIfUnreadable(run.status());
  }
  auto cost = sweep::MeasureCost(*run);
  if (!cost.ok()) {
    if (!explicit_file) return std::nullopt;
    return Usage(absl::StrCat("--estimate-from ", path, ": ", cost.status().message()));
  }
  cost->source = path;
  return std::optional<sweep::MeasuredCost>(*cost);
}

// The flags a request to gdrbench-server could carry, as a v1.SweepSpec
// (typed fields only).
absl::StatusOr<v1::SweepSpec> ToSpec(const SweepOptions& o) {
  v1::SweepSpec spec;
  GDR_ASSIGN_OR_RETURN(schedule::Mode mode, schedule::ParseMode(o.mode));
  spec.set_sweep_mode(sweep::ToSweepMode(mode));
  if (o.fan_in != 0) spec.set_fan_in(o.fan_in);
  spec.set_quick_rounds(o.quick_rounds);
  spec.set_max_concurrent(o.max_concurrent);
  SweepFlags f = o.sweep;
  // The sweep's iterations unless --duration; both given is refused.
  if (f.duration_s == 0 && f.iterations == 0) f.iterations = sweep_limits::kDefaultSweepIterations;
  GDR_ASSIGN_OR_RETURN(*spec.mutable_params(), ToSweepParams(f));
  spec.mutable_params()->clear_memory();  // a sweep's memory is --memory (the kinds)
  if (!o.memory.empty()) {
    GDR_ASSIGN_OR_RETURN(std::vector<v1::MemoryKind> kinds, sweep::ParseMemoryKinds(o.memory));
    for (v1::MemoryKind k : kinds) spec.add_memory_kinds(k);
  }
  v1::VerdictPolicy& p = *spec.mutable_policy();
  p = sweep::SweepConfig::DefaultPolicy();
  p.set_min_fraction_of_link(o.min_link_fraction);
  p.set_mad_k(o.mad_k);
  p.set_fleet_min_drop(o.fleet_min_drop);
  p.set_baseline_tolerance(o.baseline_tolerance);
  if (o.min_gpu_host_ratio) p.set_min_gpu_host_ratio(*o.min_gpu_host_ratio);
  p.set_max_retransmit_fraction(o.max_retransmit_fraction);
  p.set_ignore_link_counters(o.ignore_link_counters);
  spec.set_retest_low(o.retest_low);
  spec.set_parallel(o.parallel);
  spec.set_no_preflight(o.no_preflight);
  spec.set_force(o.force);
  return spec;
}

// --mode pairs: the pair list file, by the inventory's node names.
absl::Status ReadPairs(const SweepOptions& o, sweep::SweepConfig* c) {
  if (c->schedule.mode != schedule::Mode::kPairs) {
    return o.pairs_file.empty() ? absl::OkStatus() : Usage("--pairs is only for --mode pairs");
  }
  if (o.pairs_file.empty()) return Usage("--mode pairs needs --pairs FILE");
  GDR_ASSIGN_OR_RETURN(std::string text, ReadText(o.pairs_file, "--pairs"));
  std::vector<std::string> names;
  for (const auto& n : c->inventory.nodes) names.push_back(n.name);
  GDR_ASSIGN_OR_RETURN(c->schedule.pairs, schedule::ParsePairList(text, o.pairs_file, names));
  return absl::OkStatus();
}

// --mode cover | shift: the topology, its hosts told from its switches by
// the inventory's node names (LLDP needs them).
absl::Status LoadFabric(const SweepOptions& o, sweep::SweepConfig* c) {
  if (!schedule::FabricMode(c->schedule.mode)) {
    if (!o.cable_counters.empty())
      return Usage("--cable-counters is for --mode cover or shift (cables planned on --topology)");
    return o.topology.empty()
               ? absl::OkStatus()
               : Usage(absl::StrCat("--topology plans --mode cover or shift, not --mode ", o.mode));
  }
  if (o.topology.empty())
    return Usage(absl::StrCat("--mode ", o.mode, " plans on the fabric's cables: give --topology"));
  std::set<std::string> hosts;
  for (const auto& n : c->inventory.nodes) hosts.insert(n.name);
  auto fabric = topology::LoadTopology(o.topology, o.topology_format, hosts);
  if (!fabric.ok()) return UsageIfUnreadable(fabric.status());
  sweep::FabricInput in;
  in.fabric = *std::move(fabric);
  in.source = o.topology;
  in.routing = o.routing == "ecmp" ? topology::Routing::kEcmp : topology::Routing::kFtree;
  in.ecmp_confidence = o.ecmp_confidence;
  in.max_rounds = o.max_fabric_rounds;
  c->fabric = std::make_shared<const sweep::FabricInput>(std::move(in));
  if (!o.cable_counters.empty()) {
    const std::string cmd = o.cable_counters;
    c->cable_counters = [cmd] { return CaptureStdout({"/bin/sh", "-c", cmd}); };
    c->cable_counters_source = absl::StrCat("--cable-counters '", cmd, "'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<sweep::SweepConfig> ToSweepConfig(const SweepOptions& o) {
  GDR_ASSIGN_OR_RETURN(inventory::Inventory inv, LoadNodes(o));
  GDR_ASSIGN_OR_RETURN(v1::SweepSpec spec, ToSpec(o));
  GDR_ASSIGN_OR_RETURN(sweep::SweepConfig c, sweep::ConfigFromSpec(spec, sweep::kFlagNames));
  c.inventory = std::move(inv);
  c.inventory.expect = inventory::Merge(c.inventory.expect, o.expect);
  c.schedule.seed = o.schedule_seed;
  GDR_RETURN_IF_ERROR(ReadPairs(o, &c));
  GDR_RETURN_IF_ERROR(LoadFabric(o, &c));
  c.link_gbps = o.link_gbps;
  if (!o.baseline.empty()) {
    auto loaded = report::LoadRunJson(o.baseline);
    if (!loaded.ok()) return UsageIfUnreadable(loaded.status());
    c.baseline = std::make_shared<const v1::Run>(*std::move(loaded));
    c.policy.set_baseline_run(o.baseline);
  }
  const rpc::ClientTlsConfig& tls = o.common.tls;
  if (!tls.ca_file.empty() || !tls.cert_file.empty() || tls.insecure) c.tls = tls;  // else the inventory's
  const AgentClientConfig client = ClientConfig("", o.common);
  c.rpc_timeout = client.rpc_timeout;
  c.connect_timeout = client.connect_timeout;
  GDR_ASSIGN_OR_RETURN(c.measured, MeasuredFrom(o));
  c.retries = o.retries;
  c.sweep_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.sweep_timeout_s * 1000));
  c.all_nics = o.nics == "all";
  if (!o.resume.empty()) {
    c.journal_path = o.resume;
    c.resume = true;
  } else if (!o.out.empty()) {
    c.journal_path = (std::filesystem::path(o.out) / "journal.bin").string();
  }
  return c;
}

namespace {

// auto: a bar on a terminal, else a readable line per finished test (logs,
// cron, tee, the lab); JSON only when asked for.
ProgressPrinter::Style ProgressStyle(const std::string& p) {
  if (p == "bar") return ProgressPrinter::Style::kBar;
  if (p == "lines") return ProgressPrinter::Style::kLines;
  if (p == "json") return ProgressPrinter::Style::kJson;
  if (p == "none") return ProgressPrinter::Style::kNone;
  return isatty(STDERR_FILENO) ? ProgressPrinter::Style::kBar : ProgressPrinter::Style::kLines;
}

int DryRun(const SweepOptions& o, const sweep::SweepConfig& c) {
  auto plan = sweep::PlanWithoutAgents(c);
  if (!plan.ok()) return PrintError(plan.status());
  std::string basis = absl::StrFormat("set-up %.3g s per test (the default; an earlier run's run.json "
                                       "in --out or --estimate-from measures it)",
                                       sweep::kDefaultSetupSeconds);
  if (c.measured) {
    basis = absl::StrFormat("set-up %.3g s per test and %.3g Gb/s, measured over %zu tests of %s",
                            c.measured->setup_s, c.measured->gbps, c.measured->tests, c.measured->source);
  }
  if (o.common.json) {
    PrintPlanJson(*plan, sweep::Estimate(c), basis, stdout);
  } else {
    PrintPlanSummary(*plan, c, sweep::Estimate(c), basis, o.verbose, stdout);
    if (std::string qos = sweep::DescribeQos(c, sweep::kFlagNames); !qos.empty()) std::printf("qos: %s\n", qos.c_str());
  }
  return 0;
}

// The sweep could not run at all when no node's agent answered (every
// NodeInfo empty): a wrong port, a CA that no longer matches, the controller
// cut off from the fabric. That is kExitError, not a failed cell: the unit's
// SuccessExitStatus=1 must not hide it. A node that answered and then failed
// its preflight is a finding (kExitFailed).
bool NoAgentAnswered(const v1::Run& run) {
  if (run.nodes().empty()) return false;
  for (const auto& n : run.nodes()) {
    if (n.has_collected_at()) return false;
  }
  return true;
}

// SIGINT/SIGTERM cancel the sweep: tests already running finish, the journal
// is flushed, the run can be resumed, and the exit code is 128 + the signal
// (as a shell reports a command the signal ended). A second signal kills at
// once.
run::CancelToken* g_cancel = nullptr;
volatile sig_atomic_t g_signal = 0;

void OnSignal(int sig) {
  g_signal = sig;
  if (g_cancel != nullptr) g_cancel->Cancel();
  ::signal(sig, SIG_DFL);
}

class CancelOnSignals {
 public:
  explicit CancelOnSignals(run::CancelToken* token) {
    g_cancel = token;
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, &old_[sig == SIGINT ? 0 : 1]);
  }
  ~CancelOnSignals() {
    ::sigaction(SIGINT, &old_[0], nullptr);
    ::sigaction(SIGTERM, &old_[1], nullptr);
    g_cancel = nullptr;
  }

 private:
  struct sigaction old_[2];
};

// The sweep, its reports and its summary on stdout; `*out` gets the run
// (for --server) when it finished.
// `extend`, when set, adds to the hooks (the live upload to --server).
int Sweep(const SweepOptions& o, const sweep::SweepConfig& c, std::optional<sweep::StreamedRun>* out,
          const std::function<void(sweep::SweepHooks&)>& extend = {}) {
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return PrintError(absl::InternalError(absl::StrCat("--out ", o.out, ": ", ec.message())));

  ProgressPrinter progress(ProgressStyle(o.progress), stderr, std::chrono::milliseconds(200));
  run::CancelToken cancel;
  sweep::SweepHooks hooks;
  hooks.cancel = &cancel;
  sweep::Phase shown = sweep::Phase::kProbe;
  uint32_t shown_pass = 0;
  hooks.on_progress = [&](const sweep::SweepProgress& p) {
    if (p.phase != shown || p.retest_pass != shown_pass) {
      if (shown == sweep::Phase::kTests || shown == sweep::Phase::kRetest) progress.Finish();
      shown = p.phase;
      shown_pass = p.retest_pass;
      if (p.phase == sweep::Phase::kTests || p.phase == sweep::Phase::kRetest) {
        progress = ProgressPrinter(ProgressStyle(o.progress), stderr, std::chrono::milliseconds(200));
      }
    }
    if ((p.phase == sweep::Phase::kTests || p.phase == sweep::Phase::kRetest) && p.tests.tests_total > 0) {
      progress.Update(p.tests);
    }
  };
  hooks.on_result = [&](const v1::PairResult& r) { progress.Result(r); };
  // Between passes (after the first pass's progress finished): lines of their own.
  hooks.on_note = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  if (extend) extend(hooks);
  if (std::string qos = sweep::DescribeQos(c, sweep::kFlagNames); !qos.empty()) {
    std::fprintf(stderr, "qos: %s\n", qos.c_str());
  }
  absl::StatusOr<sweep::StreamedRun> streamed = [&] {
    CancelOnSignals signals(&cancel);
    return sweep::RunSweepStreamed(c, hooks);
  }();
  if (shown == sweep::Phase::kTests || shown == sweep::Phase::kRetest) progress.Finish();
  if (!streamed.ok()) {
    const absl::Status& status = streamed.status();
    if (absl::IsCancelled(status)) {
      // A journal is written from the first test on: cancelled before it (in
      // the probe), there is nothing to resume.
      std::error_code exists_ec;
      const bool resumable = !c.journal_path.empty() && std::filesystem::exists(c.journal_path, exists_ec);
      PrintError(absl::CancelledError(absl::StrCat(
          status.message(), resumable
                                ? absl::StrCat(": continue with --resume ", c.journal_path)
                                : std::string(": no test ran, nothing to resume; run the sweep again"))));
      return g_signal != 0 ? 128 + g_signal : kExitError;
    }
    return PrintError(status);
  }
  auto written = WriteSweepReports(*streamed, o.out);
  if (!written.ok()) return PrintError(written.status());

  // The run's header: everything but its pairs and matrix cells when streamed.
  const v1::Run* result = &streamed->header();
  if (!streamed->streamed()) {
    std::fputs(report::RenderMatrixText(*result).c_str(), stdout);
  } else if (streamed->cells() <= kWholeReportMaxCells) {
    auto whole = streamed->Materialize();
    if (!whole.ok()) return PrintError(whole.status());
    std::fputs(report::RenderMatrixText(*whole).c_str(), stdout);
  } else {
    std::printf("matrices: %d with %zu cells, in %s (printed here up to %zu cells)\n",
                result->matrices_size(), streamed->cells(),
                (std::filesystem::path(o.out) / "run.json").c_str(), kWholeReportMaxCells);
  }
  for (const auto& b : result->blame()) {
    std::printf("blame %s: %s\n", analysis::BlameLabel(b).c_str(), b.reason().c_str());
  }
  std::printf("%s\n", result->summary().c_str());
  std::fputs(gdrbench::report::FormatLeftOut(*result).c_str(), stdout);  // each cause once, with its remedy
  std::printf("report: %s\n",
              std::filesystem::absolute(std::filesystem::path(o.out) / "report.html").c_str());
  int rc = result->passed() ? kExitPassed : kExitFailed;
  if (NoAgentAnswered(*result)) {
    rc = PrintError(absl::UnavailableError(absl::StrCat(
        "the sweep could not run: none of the ", result->nodes_size(), " agents answered (",
        result->excluded_nodes().empty() ? std::string("no reason recorded") : result->excluded_nodes(0),
        result->excluded_nodes_size() > 1 ? ", ..." : "", ")")));
  }
  *out = *std::move(streamed);
  return rc;
}

}  // namespace

int SweepCommand(const SweepOptions& o) {
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" && o.progress != "json" &&
      o.progress != "none") {
    return PrintError(Usage("--progress: expected auto, bar, lines, json or none"));
  }
  auto config = ToSweepConfig(o);
  if (!config.ok()) return PrintError(config.status());
  if (o.dry_run) {
    // A plan can be made where the certificates are not (a laptop, the docs'
    // example inventories): what the sweep itself would refuse is one warning
    // line naming the file and line, and the plan follows.
    if (auto st = CheckTlsFiles(o, *config); !st.ok()) {
      std::fprintf(stderr, "gdrbench: warning: %s (a sweep would stop here)\n",
                   std::string(st.message()).c_str());
    }
    return DryRun(o, *config);
  }
  if (o.out.empty()) return PrintError(Usage("--out DIR is required (or --dry-run)"));
  // One client of --server for the sweep: the references and the live upload.
  std::shared_ptr<ServerClient> server;
  if (!o.server.address.empty()) {
    // The server's references, so cells that regressed are retested before the upload.
    auto client = ServerClient::Create(o.server);
    if (!client.ok()) return PrintError(client.status());
    server = *std::move(client);
    config->link_references = [server, cluster = o.cluster](uint32_t rail, uint64_t size_bytes) {
      v1::GetLinkReferencesRequest req;
      req.set_cluster(cluster);
      req.set_rail(rail);
      req.set_size_bytes(size_bytes);
      return server->GetLinkReferences(req);
    };
  }
  // With --server, the finished tests go to the server while the sweep runs
  // (controller/server_client/live_upload.h), from the journal, on the
  // uploader's thread; the final upload below closes the live run.
  std::unique_ptr<LiveApi> live_api;
  std::unique_ptr<LiveUploader> live;
  auto extend = [&](sweep::SweepHooks& h) {
    if (server == nullptr || config->journal_path.empty()) return;
    live_api = LiveApiOf(*server);
    h.on_start = [&, prev = h.on_start](const sweep::SweepStart& s) {
      if (prev) prev(s);
      LiveUploadOptions lo;
      lo.cluster = o.cluster;
      live = std::make_unique<LiveUploader>(*live_api, config->journal_path, lo);
    };
    h.on_result = [&, prev = h.on_result](const v1::PairResult& r) {
      if (prev) prev(r);
      if (live) live->Notify();
    };
  };
  std::optional<sweep::StreamedRun> run;
  const int rc = Sweep(o, *config, &run, extend);
  if (live) {
    LiveUploadReport lr = live->Finish(std::chrono::seconds(10));
    std::fprintf(stderr, "%s%s\n", lr.Describe().c_str(),
                 run || lr.stored ? ""
                                  : "; the run stays in progress on the server (GET /api/v1/live-runs) until "
                                    "`gdrbench sweep --resume` finishes it");
  }
  if (o.server.address.empty() || !run) return rc;
  return UploadAfterSweep(o.server, o.cluster, o.out, std::move(*run), rc);
}

}  // namespace gdrbench::controller::cli
