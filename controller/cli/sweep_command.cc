#include "controller/cli/sweep_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "controller/analysis/verdicts.h"
#include "controller/cli/cli_util.h"
#include "controller/cli/server_commands.h"
#include "controller/cli/sweep_output.h"
#include "controller/inventory/inventory.h"
#include "controller/report/report.h"
#include "controller/run/agent_api.h"
#include "controller/run/discover.h"
#include "controller/run/journal.h"
#include "controller/run/pair_tester.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::cli {
namespace {

absl::Status Usage(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

absl::StatusOr<inventory::Inventory> LoadNodes(const SweepOptions& o) {
  if (!o.inventory.empty()) return inventory::LoadInventoryFile(o.inventory);
  if (!o.agents.empty()) return inventory::InventoryFromAgents(o.agents, o.port);
  return inventory::InventoryFromHostlist(o.hostlist, o.port);
}

absl::StatusOr<std::string> ReadText(const std::string& path, absl::string_view what) {
  std::ifstream in(path);
  if (!in) return ErrnoToStatus(errno, absl::StrCat(what, " ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string NewRunId() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return absl::StrFormat("%s-%04x", buf, rd() & 0xffff);
}

google::protobuf::Timestamp Now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  google::protobuf::Timestamp t;
  t.set_seconds(ns / 1000000000);
  t.set_nanos(static_cast<int32_t>(ns % 1000000000));
  return t;
}

struct Setup {
  inventory::Inventory inventory;
  v1::SweepParams params;
  schedule::ScheduleOptions schedule;
  std::string memory;
  schedule::EstimateParams estimate;
};

absl::StatusOr<Setup> Prepare(const SweepOptions& o) {
  Setup s;
  ASSIGN_OR_RETURN(s.inventory, LoadNodes(o));
  // Nodes found by DNS are counted once their agents have named them.
  const bool discovered = std::any_of(s.inventory.nodes.begin(), s.inventory.nodes.end(),
                                      [](const inventory::Node& n) { return n.name_from_agent; });
  if (!discovered && s.inventory.nodes.size() < 2 && o.mode != "pairs") {
    return Usage(absl::StrCat(s.inventory.source, ": a sweep needs at least 2 nodes, got ",
                              s.inventory.nodes.size()));
  }
  if (o.link_gbps > 0) {
    for (auto& n : s.inventory.nodes) n.link_gbps = o.link_gbps;
  }
  s.memory = o.memory.empty() ? s.inventory.memory : o.memory;
  if (s.memory != "host" && s.memory != "hugepage" && s.memory != "gpu" && s.memory != "gpu-staged") {
    return Usage(absl::StrCat("--memory: expected host, hugepage, gpu or gpu-staged, got '", s.memory, "'"));
  }
  SweepFlags f = o.sweep;
  f.memory = s.memory;
  if (f.duration_s > 0) f.iterations = 0;
  ASSIGN_OR_RETURN(s.params, ToSweepParams(f));
  ASSIGN_OR_RETURN(s.schedule.mode, schedule::ParseMode(o.mode));
  s.schedule.bidirectional = o.sweep.bidirectional;
  s.schedule.quick_matchings = o.quick_rounds;
  s.schedule.seed = o.schedule_seed;
  s.schedule.max_concurrent = o.max_concurrent;
  if (s.schedule.mode == schedule::Mode::kPairs) {
    if (o.pairs_file.empty()) return Usage("--mode pairs needs --pairs FILE");
    ASSIGN_OR_RETURN(std::string text, ReadText(o.pairs_file, "--pairs"));
    std::vector<std::string> names;
    for (const auto& n : s.inventory.nodes) names.push_back(n.name);
    ASSIGN_OR_RETURN(s.schedule.pairs, schedule::ParsePairList(text, o.pairs_file, names));
  } else if (!o.pairs_file.empty()) {
    return Usage("--pairs is only for --mode pairs");
  }
  auto& e = s.estimate;
  e.sizes_bytes.assign(s.params.sizes_bytes().begin(), s.params.sizes_bytes().end());
  e.iterations = s.params.iterations() ? s.params.iterations() : (s.params.duration_ns() ? 0 : 5000);
  e.duration_ns = s.params.duration_ns();
  e.warmup_iterations = s.params.warmup_iterations();
  e.verify = s.params.verify();
  double rate = 0;
  for (const auto& n : s.inventory.nodes) rate = rate == 0 ? n.link_gbps : std::min(rate, n.link_gbps > 0 ? n.link_gbps : rate);
  e.link_gbps = rate > 0 ? rate : 100;
  return s;
}

// The tests behind the low cells of the verdict matrices, packed first-fit
// into rounds in which no NIC repeats.
schedule::Schedule RetestSchedule(analysis::MatrixSet& set, const run::Plan& plan) {
  std::vector<schedule::Test> tests;
  for (const analysis::Matrix* m : set.VerdictMatrices()) {
    for (uint32_t i = 0; i < m->n; ++i) {
      for (uint32_t j = 0; j < m->n; ++j) {
        if (m->at(i, j).verdict != analysis::Verdict::kLow) continue;
        // In bidirectional mode (dst, src) is the reverse half of the
        // scheduled test (src, dst): re-run that one.
        bool bidi = plan.schedule_options.bidirectional;
        uint32_t a = i, b = j;
        if (bidi) {
          for (const auto& t : plan.schedule.AllTests()) {
            if (t.rail == m->rail && t.src == j && t.dst == i) std::swap(a, b);
          }
        }
        schedule::Test t{a, b, m->rail, bidi};
        bool dup = false;
        for (const auto& x : tests) dup |= x.src == t.src && x.dst == t.dst && x.rail == t.rail;
        if (!dup) tests.push_back(t);
      }
    }
  }
  schedule::Schedule out;
  std::vector<bool> placed(tests.size(), false);
  size_t left = tests.size();
  while (left > 0) {
    std::set<std::pair<uint32_t, uint32_t>> busy;  // (node, rail)
    for (size_t k = 0; k < tests.size(); ++k) {
      const auto& t = tests[k];
      if (placed[k] || busy.count({t.src, t.rail}) || busy.count({t.dst, t.rail})) continue;
      if (plan.schedule_options.max_concurrent && busy.size() / 2 >= plan.schedule_options.max_concurrent) break;
      busy.insert({t.src, t.rail});
      busy.insert({t.dst, t.rail});
      out.Add(t);
      placed[k] = true;
      --left;
    }
    out.CloseRound();
  }
  out.CloseRound();
  return out;
}

ProgressPrinter::Style ProgressStyle(const std::string& p) {
  if (p == "bar") return ProgressPrinter::Style::kBar;
  if (p == "json") return ProgressPrinter::Style::kJson;
  if (p == "none") return ProgressPrinter::Style::kNone;
  return isatty(STDERR_FILENO) ? ProgressPrinter::Style::kBar : ProgressPrinter::Style::kJson;
}

int DryRun(const SweepOptions& o, const Setup& s) {
  auto plan = run::MakePlan(run::NodesFromInventory(s.inventory), s.memory, s.schedule, s.params);
  if (!plan.ok()) return PrintError(plan.status());
  if (o.common.json) {
    PrintPlanJson(*plan, s.estimate, stdout);
  } else {
    PrintPlanText(*plan, s.estimate, stdout);
  }
  return 0;
}

int Sweep(const SweepOptions& o, const Setup& s) {
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "json" && o.progress != "none") {
    return PrintError(Usage("--progress: expected auto, bar, json or none"));
  }
  std::unique_ptr<analysis::Baseline> baseline;
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  policy.set_min_fraction_of_link(o.min_link_fraction);
  policy.set_mad_k(o.mad_k);
  policy.set_fleet_min_drop(o.fleet_min_drop);
  policy.set_baseline_tolerance(o.baseline_tolerance);
  if (!o.baseline.empty()) {
    auto b = report::LoadRunJson(o.baseline);
    if (!b.ok()) return PrintError(b.status());
    auto bl = analysis::Baseline::FromRun(*b);
    if (!bl.ok()) return PrintError(absl::InvalidArgumentError(absl::StrCat("--baseline ", o.baseline, ": ", bl.status().message())));
    baseline = std::make_unique<analysis::Baseline>(std::move(*bl));
    policy.set_baseline_run(o.baseline);
  }

  // Agents.
  rpc::ClientTlsConfig tls = o.common.tls;
  const bool cli_tls = !tls.ca_file.empty() || !tls.cert_file.empty() || tls.insecure;
  if (!cli_tls && s.inventory.has_tls) tls = s.inventory.tls;
  std::vector<std::unique_ptr<run::GrpcAgentApi>> owned;
  std::vector<run::AgentApi*> agents;
  for (const auto& n : s.inventory.nodes) {
    AgentClientConfig cfg = ClientConfig(n.address, o.common);
    cfg.tls = tls;
    auto a = run::GrpcAgentApi::Create(cfg);
    if (!a.ok()) return PrintError(absl::InvalidArgumentError(absl::StrCat("node ", n.name, ": ", a.status().message())));
    agents.push_back(a->get());
    owned.push_back(std::move(*a));
  }

  // Nodes found by DNS take their agents' hostnames as names.
  inventory::Inventory nodes = s.inventory;
  if (std::any_of(nodes.nodes.begin(), nodes.nodes.end(),
                  [](const inventory::Node& n) { return n.name_from_agent; })) {
    auto kept = run::NameDiscoveredNodes(&nodes, agents, o.parallel);
    if (!kept.ok()) return PrintError(kept.status());
    std::vector<run::AgentApi*> named;
    for (size_t i : *kept) named.push_back(agents[i]);
    agents = std::move(named);
    if (nodes.nodes.size() < 2 && o.mode != "pairs") {
      std::vector<std::string> found;
      for (const auto& n : nodes.nodes) found.push_back(absl::StrCat(n.name, " at ", n.address));
      return PrintError(Usage(absl::StrCat(nodes.source, ": a sweep needs at least 2 nodes, got ",
                                           nodes.nodes.size(), " (", absl::StrJoin(found, ", "),
                                           ")")));
    }
  }

  // Preflight and discovery.
  run::ProbeOptions po;
  po.preflight = !o.no_preflight;
  po.force = o.force;
  po.parallelism = o.parallel;
  spdlog::info("probing {} agents", agents.size());
  run::ProbeResult probe = run::ProbeNodes(nodes, agents, po);
  auto plan = run::MakePlan(probe.nodes, s.memory, s.schedule, s.params);
  if (!plan.ok()) return PrintError(plan.status());

  // Journal: new, or the interrupted one.
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return PrintError(absl::InternalError(absl::StrCat("--out ", o.out, ": ", ec.message())));
  std::unique_ptr<run::JournalWriter> journal;
  std::vector<v1::PairResult> pairs;
  std::unordered_set<std::string> done;
  v1::JournalHeader header;
  if (!o.resume.empty()) {
    auto j = run::ReadJournal(o.resume);
    if (!j.ok()) return PrintError(j.status());
    if (j->header.plan_fingerprint() != plan->fingerprint) {
      return PrintError(Usage(absl::StrCat(
          "--resume ", o.resume, ": the journal was written for plan ", j->header.plan_fingerprint(),
          ", this command makes plan ", plan->fingerprint,
          ": resume with the same inventory and flags (and the same nodes answering)")));
    }
    header = j->header;
    pairs = std::move(j->pairs);
    for (const auto& p : pairs) done.insert(run::TestKey(p));
    auto w = run::JournalWriter::Reopen(o.resume, j->valid_bytes);
    if (!w.ok()) return PrintError(w.status());
    journal = std::move(*w);
    spdlog::info("resuming run {}: {} tests already done{}", header.run_id(), pairs.size(),
                 j->torn_tail ? " (a torn last record was dropped)" : "");
  } else {
    header.set_run_id(NewRunId());
    header.set_plan_fingerprint(plan->fingerprint);
    *header.mutable_started_at() = Now();
    header.set_mode(o.mode);
    *header.mutable_params() = plan->params;
    for (const auto& n : plan->nodes) header.add_nodes(n.name);
    header.set_tests(plan->schedule.tests());
    std::string path = (std::filesystem::path(o.out) / "journal.bin").string();
    auto w = run::JournalWriter::Create(path, header);
    if (!w.ok()) return PrintError(w.status());
    journal = std::move(*w);
  }

  // Run.
  run::AgentPairTesterOptions to;
  double sweep_s = o.sweep_timeout_s > 0 ? o.sweep_timeout_s
                                         : schedule::EstimateTestSeconds(s.estimate) * 4 + 30;
  to.sweep_timeout = std::chrono::milliseconds(static_cast<int64_t>(sweep_s * 1000));
  run::AgentPairTester tester(agents, to);
  ProgressPrinter progress(ProgressStyle(o.progress), stderr, std::chrono::milliseconds(200));
  run::RunnerOptions ro;
  ro.parallelism = o.parallel;
  ro.retries = o.retries;
  ro.on_result = [&](const v1::PairResult& r) -> absl::Status {
    RETURN_IF_ERROR(journal->Append(r));
    pairs.push_back(r);
    return absl::OkStatus();
  };
  ro.on_progress = [&](const run::Progress& p) { progress.Update(p); };
  run::SweepRunner runner(*plan, tester, ro);
  absl::Status st = runner.Run(done);
  progress.Finish();
  if (!st.ok()) return PrintError(st);

  // Analysis; then outlier retests: the tests of low cells run again (a
  // transient stall does not repeat, a bad link does) and the new results
  // replace the first ones, each pass numbering its rounds after the last.
  std::vector<std::string> names;
  std::vector<std::string> excluded;
  for (const auto& n : plan->nodes) {
    names.push_back(n.name);
    if (n.excluded) excluded.push_back(absl::StrCat(n.name, ": ", n.excluded_reason));
  }
  auto judge = [&](std::unique_ptr<analysis::MatrixSet>* set) {
    *set = std::make_unique<analysis::MatrixSet>(names, s.schedule.bidirectional);
    for (const auto& p : pairs) (*set)->Add(p);
    return analysis::Judge(**set, policy, baseline.get(), excluded);
  };
  std::unique_ptr<analysis::MatrixSet> matrices;
  analysis::Outcome outcome = judge(&matrices);
  uint32_t offset = static_cast<uint32_t>(plan->schedule.rounds());
  for (uint32_t pass = 0; pass < o.retest_low && outcome.low > 0; ++pass) {
    run::Plan retest = *plan;
    retest.schedule = RetestSchedule(*matrices, *plan);
    if (retest.schedule.tests() == 0) break;
    spdlog::info("outlier retest {}: {} low cell(s) in {} round(s)", pass + 1,
                 retest.schedule.tests(), retest.schedule.rounds());
    ro.round_offset = offset;
    offset += static_cast<uint32_t>(retest.schedule.rounds());
    run::SweepRunner again(retest, tester, ro);
    st = again.Run(done);
    progress.Finish();
    if (!st.ok()) return PrintError(st);
    outcome = judge(&matrices);
  }
  v1::Run result;
  result.set_run_id(header.run_id());
  *result.mutable_started_at() = header.started_at();
  *result.mutable_finished_at() = Now();
  result.set_mode(o.mode);
  *result.mutable_params() = plan->params;
  for (const auto& info : probe.infos) {
    if (!info.hostname().empty()) *result.add_nodes() = info;
  }
  for (const auto& rep : probe.preflight) *result.add_preflight() = rep;
  for (auto& p : pairs) *result.add_pairs() = std::move(p);
  for (const auto& e : excluded) result.add_excluded_nodes(e);
  *result.mutable_policy() = policy;
  analysis::FillRun(*matrices, outcome, &result);
  auto written = report::WriteReports(result, o.out);
  if (!written.ok()) return PrintError(written.status());

  std::fputs(report::RenderMatrixText(result).c_str(), stdout);
  for (const auto& b : result.blame()) {
    std::printf("blame %s %s: %s\n", b.kind().c_str(), b.subject().c_str(), b.reason().c_str());
  }
  std::printf("%s\n", result.summary().c_str());
  std::printf("report: %s\n",
              std::filesystem::absolute(std::filesystem::path(o.out) / "report.html").c_str());
  return result.passed() ? 0 : 1;
}

}  // namespace

int SweepCommand(const SweepOptions& o) {
  auto setup = Prepare(o);
  if (!setup.ok()) return PrintError(setup.status());
  if (o.dry_run) return DryRun(o, *setup);
  if (o.out.empty()) return PrintError(Usage("--out DIR is required (or --dry-run)"));
  const int rc = Sweep(o, *setup);
  if (o.server.address.empty() || rc > 1) return rc;
  return UploadAfterSweep(o.server, o.cluster, o.out, rc);
}

}  // namespace gdrbench::controller::cli
