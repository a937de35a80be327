#include "controller/sweep/sweep.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "controller/analysis/gdr.h"
#include "controller/analysis/incast.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/verdicts.h"
#include "controller/run/port_state.h"
#include "controller/run/probe.h"
#include "controller/sweep/cable_counters.h"
#include "controller/sweep/fabric_isolation.h"
#include "controller/sweep/retest.h"
#include "controller/sweep/sweep_internal.h"
#include "report/coverage.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::sweep {
namespace {

using internal::Agents;
using internal::Collector;
using internal::Journal;
using internal::Resolved;

uint64_t DrawSeed() {
  std::random_device rd;
  const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return seed != 0 ? seed : 1;
}

bool Cancelled(const SweepHooks& h) { return h.cancel != nullptr && h.cancel->cancelled(); }

void Report(const SweepHooks& h, Phase phase, uint32_t pass = 0, const run::Progress* p = nullptr) {
  if (!h.on_progress) return;
  SweepProgress sp;
  sp.phase = phase;
  sp.retest_pass = pass;
  if (p != nullptr) sp.tests = *p;
  h.on_progress(sp);
}

// The cells of the first pass that regressed against the server's
// references (regressed.h), and their partners; none without a server
// (said in the log), in incast runs (a cell's rate depends on its group) or
// without retests.
RegressedCells FindRegressedCells(const SweepConfig& c, const SweepHooks& h, const run::Plan& plan,
                                  const analysis::MatrixSet& matrices) {
  auto note = [&h](const std::string& line) {
    if (h.on_note) {
      h.on_note(line);
    } else {
      spdlog::info("{}", line);
    }
  };
  if (c.retest_low == 0 || plan.schedule_options.mode == schedule::Mode::kIncast) return {};
  if (!c.link_references) {
    note(
        "regressions: no server to ask for each link's baseline and history (--server): cells that regressed "
        "are not retested, only low ones");
    return {};
  }
  return FetchAndFind(c.link_references, matrices, note);
}

absl::Status CancelledStatus(const std::string& run_id, const absl::Status& runner,
                             const std::string& journal) {
  return absl::CancelledError(absl::StrCat(
      "sweep ", run_id, " ", runner.message(),
      journal.empty() ? "" : absl::StrCat("; the journal ", journal, " resumes it")));
}

}  // namespace

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kProbe: return "probe";
    case Phase::kTests: return "tests";
    case Phase::kRetest: return "retest";
    case Phase::kAnalysis: return "analysis";
  }
  return "?";
}

namespace {

// The reference of the baseline run the policy names; null without one.
absl::StatusOr<std::unique_ptr<analysis::Baseline>> LoadBaseline(const SweepConfig& c) {
  if (!c.baseline) return std::unique_ptr<analysis::Baseline>();
  auto b = analysis::Baseline::FromRun(*c.baseline);
  if (!b.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("baseline ", c.policy.baseline_run(), ": ", b.status().message()));
  }
  return std::make_unique<analysis::Baseline>(std::move(*b));
}

// Preflight and discovery of every agent; CANCELLED when the sweep was
// cancelled meanwhile.
absl::StatusOr<run::ProbeResult> ProbeAgents(const SweepConfig& c, const inventory::Inventory& inv,
                                             const std::vector<run::AgentApi*>& api,
                                             const SweepHooks& hooks) {
  Report(hooks, Phase::kProbe);
  run::ProbeOptions po;
  po.preflight = c.preflight;
  po.force = c.force;
  po.all_nics = c.all_nics;
  po.parallelism = c.parallel;
  po.expect = inv.expect;
  po.expectations = internal::MergedAgentExpectations(inv.expect, c.expectations);
  po.cancel = hooks.cancel;
  spdlog::info("probing {} agents", api.size());
  run::ProbeResult probe = run::ProbeNodes(inv, api, po);
  if (Cancelled(hooks)) {
    size_t answered = 0;
    for (const auto& info : probe.infos) answered += !info.hostname().empty();
    return absl::CancelledError(absl::StrCat("sweep cancelled while probing its agents (", answered, " of ",
                                             probe.infos.size(), " answered), before its first test"));
  }
  return probe;
}

// A test's deadline: the configured one, else the estimate's with margin.
std::chrono::milliseconds SweepTimeout(const SweepConfig& c) {
  if (c.sweep_timeout.count() > 0) return c.sweep_timeout;
  return std::chrono::milliseconds(
      static_cast<int64_t>((schedule::EstimateTestSeconds(Estimate(c)) * sweep_limits::kSweepTimeoutFactor +
                            sweep_limits::kSweepTimeoutSlackSeconds) *
                           1000));
}

// The runner's options: each result to the collector (the journal first),
// progress to the hooks under the `phase` and `pass` the sweep is in.
run::RunnerOptions RunnerOptionsFor(const SweepConfig& c, const SweepHooks& hooks, Collector& collect,
                                    const Phase& phase, const uint32_t& pass) {
  run::RunnerOptions ro;
  ro.parallelism = c.parallel;
  ro.retries = c.retries;
  ro.cancel = hooks.cancel;
  ro.on_result_concurrent = [&collect](const v1::PairResult& res, const schedule::Test& t) {
    return collect.Record(res, t);
  };
  ro.on_result = [&collect](const v1::PairResult& res, const schedule::Test& t) {
    return collect.OnResult(res, t);
  };
  if (hooks.on_progress) {
    ro.on_progress = [&hooks, &phase, &pass](const run::Progress& p) { Report(hooks, phase, pass, &p); };
  }
  return ro;
}

// Every node left out of the plan, with its reason.
std::vector<std::string> ExcludedNodes(const run::Plan& plan) {
  std::vector<std::string> excluded;
  for (const auto& n : plan.nodes) {
    if (n.excluded) excluded.push_back(absl::StrCat(n.name, ": ", n.excluded_reason));
  }
  return excluded;
}

// The run's record: identity, nodes, the pairs (moved out of the collector)
// and the analysis' matrices, blame and flags.
// The switch port counters of a fabric run, read before the first test and
// after the last (cable_counters.h).
struct SwitchReads {
  bool asked = false;
  std::optional<v1::SwitchCounters> before, after;
  std::string error;  // the first read that failed
};

void ReadSwitchCounters(const SweepConfig& c, std::optional<v1::SwitchCounters>* into, SwitchReads* reads) {
  if (!reads->asked || !reads->error.empty()) return;
  absl::StatusOr<std::string> text = c.cable_counters();
  absl::StatusOr<v1::SwitchCounters> parsed = text.ok() ? ParseSwitchCounters(*text, c.cable_counters_source)
                                                        : absl::StatusOr<v1::SwitchCounters>(text.status());
  if (!parsed.ok()) {
    reads->error = std::string(parsed.status().message());
    spdlog::warn("switch counters ({}): {}; no cable is proven by counters", c.cable_counters_source,
                 reads->error);
    return;
  }
  *into = *std::move(parsed);
}

void FillCoverage(const SweepConfig& c, const run::Plan& plan, const Collector& collect,
                  const SwitchReads& reads, v1::Run* result) {
  v1::FabricCoverage& cov = *result->mutable_coverage();
  cov = collect.coverage().Coverage();
  if (reads.asked) {
    cov.set_counters_source(c.cable_counters_source);
    if (!reads.error.empty()) {
      cov.set_counters_error(reads.error);
    } else if (reads.before && reads.after) {
      JudgeCableCounters(*plan.fabric, collect.coverage().loads(), *reads.before, *reads.after, &cov);
    }
  }
  // A cable whose error counters grew is a fault of that cable (or its
  // ports): blamed, and the run fails, even when every cell read well.
  for (const v1::CableCounterFinding& f : cov.counter_findings()) {
    if (f.kind() != "errors") continue;
    v1::Blame& b = *result->add_blame();
    b.set_kind("cable");
    b.set_subject(f.cable());
    b.set_reason(absl::StrCat("its switch port counters: ", f.detail(), " (", c.cable_counters_source, ")"));
    result->set_passed(false);
  }
  result->set_summary(absl::StrCat(result->summary(), "; ", gdrbench::report::CoverageText(cov)));
}

v1::Run AssembleRun(const SweepConfig& c, const Journal& journal, const run::Plan& plan,
                    const run::ProbeResult& probe, Collector& collect, const SwitchReads& reads,
                    const std::vector<std::string>& excluded, const analysis::Outcome& outcome) {
  v1::Run result;
  result.set_run_id(journal.header.run_id());
  *result.mutable_started_at() = journal.header.started_at();
  *result.mutable_finished_at() = internal::Now();
  result.set_mode(schedule::ModeName(plan.schedule_options.mode));
  *result.mutable_params() = plan.params;
  for (const auto& info : probe.infos)
    *result.add_nodes() = run::ForRunRecord(info);  // aligned with preflight
  for (const auto& rep : probe.preflight) *result.add_preflight() = rep;
  if (!collect.streamed()) {
    result.mutable_pairs()->Reserve(static_cast<int>(collect.pairs().size()));
    for (auto& p : collect.pairs()) *result.add_pairs() = std::move(p);
    collect.pairs().clear();
  }
  for (const auto& e : excluded) result.add_excluded_nodes(e);
  *result.mutable_policy() = c.policy;
  analysis::FillRun(collect.matrices(), outcome, &result, !collect.streamed());
  if (collect.streamed()) {
    // The flagged pairs' reasons into the compact matrices, which render
    // the cells later (StreamedRun).
    std::string summary = result.summary();
    analysis::FlagLinks(c.policy, &collect.pairs(), &collect.matrices(), &summary);
    result.set_summary(summary);
  } else {
    analysis::FlagLinks(c.policy, &result);
  }
  if (plan.schedule_options.mode == schedule::Mode::kIncast) analysis::FillIncast(&result);
  if (plan.fabric != nullptr) FillCoverage(c, plan, collect, reads, &result);
  // Without keep_pairs the pairs kept for the analysis are not the run's.
  if (!c.keep_pairs) result.clear_pairs();
  return result;
}

}  // namespace

namespace {

// A copy of `plan` running `schedule` instead of its own: the plan's
// schedule is not copied (a stored one can be large: a cross-rail plan's).
run::Plan WithSchedule(run::Plan& plan, schedule::Schedule schedule) {
  schedule::Schedule own = std::move(plan.schedule);
  run::Plan copy = plan;
  plan.schedule = std::move(own);
  copy.schedule = std::move(schedule);
  return copy;
}

// Why a run cannot be streamed from its journal (its analysis or its
// record needs every pair in memory); "" when it can.
std::string NotStreamable(const SweepConfig& c, const run::Plan& plan) {
  if (c.journal_path.empty()) return "no journal to read its pairs back from";
  return internal::WhyEveryPair(plan);
}

absl::StatusOr<StreamedRun> RunSweepImpl(const SweepConfig& c, const SweepHooks& hooks, bool stream) {
  GDR_ASSIGN_OR_RETURN(Resolved r, internal::Resolve(c));
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<analysis::Baseline> baseline, LoadBaseline(c));
  GDR_ASSIGN_OR_RETURN(Agents agents, internal::ConnectAgents(c, r.inventory));
  GDR_RETURN_IF_ERROR(internal::NameDiscovered(c, &r.inventory, &agents.api));

  // Preflight and discovery.
  GDR_ASSIGN_OR_RETURN(run::ProbeResult probe, ProbeAgents(c, r.inventory, agents.api, hooks));
  std::shared_ptr<const FabricRun> fabric_run;
  GDR_ASSIGN_OR_RETURN(
      run::Plan plan, internal::MakeSweepPlan(c, probe.nodes, r.memory, r.params, &probe.infos, &fabric_run));
  // The run's verify seed, drawn unless given (after the fingerprint, which
  // a resume must match): recorded in the journal's header and Run.params; a
  // resume takes the header's.
  if (!c.resume && plan.params.seed() == 0) plan.params.set_seed(DrawSeed());
  Collector collect(plan, c, hooks);
  if (stream) {
    const std::string why = NotStreamable(c, plan);
    collect.set_streamed(why.empty());
    if (!why.empty()) {
      spdlog::warn("run kept whole in memory, not streamed from its journal: {}", why);
    }
  }
  GDR_ASSIGN_OR_RETURN(Journal journal, internal::OpenJournal(c, plan, collect));
  if (c.resume && journal.header.params().seed() != 0) plan.params.set_seed(journal.header.params().seed());
  collect.set_journal(journal.writer.get());
  const std::string& run_id = journal.header.run_id();
  if (plan.params.verify()) spdlog::info("run {}: verify seed {} (each test's is derived from it)", run_id, plan.params.seed());
  if (std::string qos = DescribeQos(c); !qos.empty()) spdlog::info("run {}: {}", run_id, qos);
  if (hooks.on_start) hooks.on_start(SweepStart{run_id, plan, journal.done.size()});

  // The tests.
  run::AgentPairTesterOptions to;
  to.test.sweep_timeout = SweepTimeout(c);
  run::AgentPairTester tester(agents.api, to);
  Phase phase = Phase::kTests;
  uint32_t pass = 0;
  run::RunnerOptions ro = RunnerOptionsFor(c, hooks, collect, phase, pass);
  // On any stop the journal is flushed (its destructor too, but a flush
  // error is reported here).
  auto stop = [&](const absl::Status& st) -> absl::Status {
    absl::Status flushed = journal.writer ? journal.writer->Flush() : absl::OkStatus();
    if (st.code() == absl::StatusCode::kCancelled) {
      return CancelledStatus(run_id, st, journal.writer ? journal.writer->path() : "");
    }
    return st.ok() ? flushed : st;
  };
  SwitchReads switches;
  switches.asked = plan.fabric != nullptr && c.cable_counters != nullptr;
  ReadSwitchCounters(c, &switches.before, &switches);
  Report(hooks, phase);
  if (absl::Status st = run::SweepRunner(plan, tester, ro).Run(journal.done); !st.ok()) {
    return stop(st);
  }

  // Analysis; then outlier retests: the tests of low cells run again and the
  // new results replace the first ones, each pass numbering its rounds
  // after the last.
  const std::vector<std::string> excluded = ExcludedNodes(plan);
  Report(hooks, Phase::kAnalysis);
  analysis::Outcome outcome = analysis::Judge(collect.matrices(), c.policy, baseline.get(), excluded);
  uint32_t offset = static_cast<uint32_t>(plan.schedule.rounds());
  // Regressed cells are retested once, in the first pass.
  RegressedCells regressed = FindRegressedCells(c, hooks, plan, collect.matrices());
  for (pass = 1; pass <= c.retest_low && (outcome.low > 0 || !regressed.regressed.empty()); ++pass) {
    std::vector<CellRef> extra = regressed.regressed;
    extra.insert(extra.end(), regressed.partners.begin(), regressed.partners.end());
    GDR_ASSIGN_OR_RETURN(schedule::Schedule retests, RetestSchedule(collect.matrices(), plan, extra));
    run::Plan retest = WithSchedule(plan, std::move(retests));
    if (retest.schedule.tests() == 0) break;
    MarkRetested(collect.matrices(), regressed.regressed);
    spdlog::info("outlier retest {}: {} test(s) ({} low, {} regressed cell(s)) in {} round(s)", pass,
                 retest.schedule.tests(), outcome.low, regressed.regressed.size(), retest.schedule.rounds());
    regressed = {};
    phase = Phase::kRetest;
    Report(hooks, phase, pass);
    ro.round_offset = offset;
    offset += static_cast<uint32_t>(retest.schedule.rounds());
    if (absl::Status st = run::SweepRunner(retest, tester, ro).Run(journal.done); !st.ok()) {
      return stop(st);
    }
    Report(hooks, Phase::kAnalysis);
    outcome = analysis::Judge(collect.matrices(), c.policy, baseline.get(), excluded);
  }
  // --mode cover | shift: the bad flows' suspects isolated, retest round by round.
  std::optional<topology::Isolation> isolation;
  size_t unjudged = 0;
  if (fabric_run != nullptr && (outcome.low > 0 || outcome.fail > 0)) {
    Report(hooks, Phase::kRetest, ++pass);
    auto run_round = [&](const run::Plan& retest) {
      ro.round_offset = offset;
      offset += static_cast<uint32_t>(retest.schedule.rounds());
      return run::SweepRunner(retest, tester, ro).Run(journal.done);
    };
    auto judge = [&] { outcome = analysis::Judge(collect.matrices(), c.policy, baseline.get(), excluded); };
    absl::StatusOr<topology::Isolation> iso = internal::IsolateSuspects(
        *fabric_run, c.fabric->routing, plan, collect.matrices(), run_round, judge, &unjudged);
    if (!iso.ok()) return stop(iso.status());
    isolation = *std::move(iso);
    spdlog::info("isolation: {} extra round(s), {} finding(s), {} unresolved", isolation->extra_rounds,
                 isolation->findings.size(), isolation->unresolved.size());
  }
  GDR_RETURN_IF_ERROR(stop(absl::OkStatus()));
  ReadSwitchCounters(c, &switches.after, &switches);
  // --memory lists: the later kinds' halves and the gdr blames (gdr.h).
  analysis::JudgeMemoryHalves(collect.pairs(), c.policy, excluded, &outcome);

  v1::FabricCoverage isolated;
  if (isolation) {
    internal::ApplyIsolation(*isolation, unjudged, &outcome, &isolated);
    analysis::Summarize(excluded, &outcome);  // the summary's blame is the isolation's now
  }
  const bool streamed = collect.streamed();
  v1::Run result = AssembleRun(c, journal, plan, probe, collect, switches, excluded, outcome);
  if (isolation) {
    result.mutable_coverage()->MergeFrom(isolated);
    if (!isolation->findings.empty() || !isolation->unresolved.empty()) {
      result.set_summary(absl::StrCat(result.summary(), "; isolation: ", isolation->findings.size(),
                                      " named in ", isolation->extra_rounds, " extra round(s)",
                                      isolation->unresolved.empty()
                                          ? ""
                                          : absl::StrCat(", ", isolation->unresolved.size(), " unresolved")));
    }
  }
  if (!streamed) return StreamedRun::Whole(std::move(result));
  return StreamedRun::FromJournal(std::move(result),
                                  std::make_shared<analysis::MatrixSet>(std::move(collect.matrices())),
                                  journal.writer->path(), c.keep_pairs, c.policy);
}

}  // namespace

absl::StatusOr<v1::Run> RunSweep(const SweepConfig& c, const SweepHooks& hooks) {
  GDR_ASSIGN_OR_RETURN(StreamedRun run, RunSweepImpl(c, hooks, false));
  return std::move(*run.mutable_header());
}

absl::StatusOr<StreamedRun> RunSweepStreamed(const SweepConfig& c, const SweepHooks& hooks) {
  return RunSweepImpl(c, hooks, true);
}

}  // namespace gdrbench::controller::sweep
