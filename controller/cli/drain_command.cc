#include "controller/cli/drain_command.h"

#include <cstdio>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/cli/commands.h"
#include "controller/cli/slurm_exec.h"
#include "controller/report/report.h"
#include "controller/slurm/drain.h"
#include "controller/slurm/resume.h"
#include "controller/slurm/taint.h"
#include "controller/slurm/verdict_files.h"

namespace gdrbench::controller::cli {
namespace {

// The run from the server: its header view (blame, excluded nodes, the
// matrices' node names; no pairs), which is all the drain reads.
absl::StatusOr<v1::Run> FetchRun(const DrainOptions& o) {
  GDR_ASSIGN_OR_RETURN(auto client, ServerClient::Create(o.server));
  std::string id = o.run_id;
  if (id == "latest") {
    v1::ListRunsRequest list;
    list.set_cluster(o.cluster);
    list.set_page_size(1);
    GDR_ASSIGN_OR_RETURN(v1::ListRunsResponse runs, client->ListRuns(list));
    if (runs.runs().empty()) {
      return absl::NotFoundError(absl::StrCat("no run on ", o.server.address,
                                              o.cluster.empty() ? "" : " for cluster " + o.cluster));
    }
    id = runs.runs(0).run_id();
  }
  v1::GetRunRequest get;
  get.set_run_id(id);
  get.set_view(v1::RUN_VIEW_HEADER);
  return client->GetRun(get);
}

// The run and what it allows, for every command here: usage checked, the
// run read (file or server) and planned through slurm::PlanDrain.
struct Planned {
  v1::Run run;
  slurm::DrainPlan plan;
};

bool OnKubernetes(const DrainOptions& o) { return o.on == "kubernetes"; }

absl::StatusOr<slurm::DrainPolicy> Usage(const DrainOptions& o) {
  if (o.on != "slurm" && o.on != "kubernetes") {
    return absl::InvalidArgumentError(absl::StrCat("--on: expected slurm or kubernetes, got '", o.on, "'"));
  }
  if (o.run_file.empty() == o.server.address.empty()) {
    return absl::InvalidArgumentError("give --run FILE or --server HOST:PORT [--run-id ID]");
  }
  GDR_ASSIGN_OR_RETURN(slurm::DrainPolicy p, slurm::ParseDrainKinds(o.what, o.max_fraction));
  p.min_streak = o.min_streak;
  return p;
}

// *refused: the fraction guard refused the run (not a read error).
absl::StatusOr<Planned> LoadAndPlan(const DrainOptions& o, const slurm::DrainPolicy& policy,
                                    bool* refused) {
  Planned p;
  GDR_ASSIGN_OR_RETURN(p.run, o.run_file.empty() ? FetchRun(o) : report::LoadRunJson(o.run_file));
  auto plan = slurm::PlanDrain(p.run, policy);
  if (!plan.ok()) {
    *refused = absl::IsFailedPrecondition(plan.status());
    const std::string source = o.run_file.empty()
                                   ? absl::StrCat("run ", p.run.run_id(), " on ", o.server.address)
                                   : o.run_file;
    return absl::Status(plan.status().code(), absl::StrCat(source, ": ", plan.status().message()));
  }
  p.plan = std::move(*plan);
  if (!o.verdicts_dir.empty()) GDR_RETURN_IF_ERROR(slurm::WriteVerdictFiles(p.plan, o.verdicts_dir));
  return p;
}

int Fail(const absl::Status& st, bool refused) {
  if (refused) {
    PrintError(st);
    return kDrainRefused;
  }
  return PrintError(st);
}

// Before the first change: the rights slurmctld (or the API server) will ask for.
absl::Status CheckRights(const DrainOptions& o, const std::string& action) {
  if (!OnKubernetes(o)) return slurm::CheckAdminRights(WhoAmI(o.scontrol, o.sacctmgr), action);
  auto said = CaptureStdout(slurm::KubectlCanIArgv(o.kubectl));
  if (said.ok() && absl::StripAsciiWhitespace(*said) == "yes") return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "may not ", action, ": `kubectl auth can-i patch nodes` did not say yes (",
      said.ok() ? std::string(absl::StripAsciiWhitespace(*said)) : std::string(said.status().message()),
      "): the taint and the annotation need a role that may patch nodes (a ClusterRole with "
      "verbs [patch] on resources [nodes])"));
}

// Runs each argv in turn; false (and a line on stderr) at the first that fails.
bool RunAll(const DrainOptions& o, const std::string& what, const std::string& node,
            const std::vector<std::vector<std::string>>& argvs) {
  for (const auto& argv : argvs) {
    if (o.dry_run) {
      std::printf("%s\n", slurm::ShellQuote(argv).c_str());
      continue;
    }
    std::string why;
    if (int rc = SpawnWait(argv, &why); rc != 0) {
      if (why.empty()) why = absl::StrCat(argv[0], " exited ", rc);
      std::fprintf(stderr, "gdrbench: %s %s: %s\n", what.c_str(), node.c_str(), why.c_str());
      return false;
    }
  }
  return true;
}

int Check(const DrainOptions& o, const absl::StatusOr<Planned>& p) {
  if (!p.ok()) {
    std::fprintf(stderr, "gdrbench: unknown: %s\n", std::string(p.status().message()).c_str());
    return kCheckUnknown;
  }
  for (const auto& v : p->plan.verdicts) {
    if (v.node != o.check_node || v.verdict != slurm::Verdict::kDrain) continue;
    std::printf("%s\n", v.reason.c_str());
    return kCheckDrain;
  }
  return kDrainOk;
}

}  // namespace

int DrainCommand(const DrainOptions& o) {
  auto policy = Usage(o);
  if (!policy.ok()) return PrintError(policy.status());
  bool refused = false;
  auto planned = LoadAndPlan(o, *policy, &refused);
  if (!o.check_node.empty()) return Check(o, planned);
  if (!planned.ok()) return Fail(planned.status(), refused);
  const v1::Run& run = planned->run;
  const auto& findings = planned->plan.drain;
  for (const auto& b : run.blame()) {
    if (slurm::Persists(b, *policy)) continue;
    if (!b.confirmed()) {
      std::printf("not yet: %s %s seen once (not confirmed by a retest)\n", b.kind().c_str(),
                  b.subject().c_str());
    } else {
      std::printf("not yet: %s %s seen in %u run%s in a row (--min-streak %u)\n", b.kind().c_str(),
                  b.subject().c_str(), b.streak(), b.streak() == 1 ? "" : "s", policy->min_streak);
    }
  }
  if (!findings.empty() && !planned->plan.streaks_known && run.blame_size() > 0 && policy->min_streak > 1) {
    std::fprintf(stderr,
                 "gdrbench: run %s carries no streaks (not stored by gdrbench-server): acting on this run "
                 "alone\n",
                 run.run_id().c_str());
  }
  if (findings.empty()) {
    std::printf("run %s: no node to drain\n", run.run_id().c_str());
    return kDrainOk;
  }
  if (!o.dry_run) {
    if (auto st = CheckRights(o, "drain nodes"); !st.ok()) return PrintError(st);
  }
  int failed = 0;
  for (const auto& f : findings) {
    auto argvs = OnKubernetes(o) ? slurm::KubectlDrainArgvs(o.kubectl, f, run)
                                 : std::vector<std::vector<std::string>>{slurm::ScontrolDrainArgv(o.scontrol, f, run)};
    if (!RunAll(o, "drain", f.node, argvs)) {
      ++failed;
      continue;
    }
    if (!o.dry_run) std::printf("drained %s: %s\n", f.node.c_str(), slurm::DrainReason(f, run).c_str());
  }
  return failed ? kDrainFailed : kDrainOk;
}

int ResumeCommand(const DrainOptions& o) {
  auto policy = Usage(o);
  if (!policy.ok()) return PrintError(policy.status());
  bool refused = false;
  auto planned = LoadAndPlan(o, *policy, &refused);
  if (!planned.ok()) return Fail(planned.status(), refused);
  auto listed = OnKubernetes(o) ? CaptureStdout(slurm::KubectlListArgv(o.kubectl))
                                : CaptureStdout({o.sinfo, "-h", "-N", "-o", slurm::kSinfoFormat});
  if (!listed.ok()) return PrintError(listed.status());
  auto states = OnKubernetes(o) ? slurm::ParseKubectlNodes(*listed) : slurm::ParseSinfoNodes(*listed);
  if (!states.ok()) return PrintError(absl::UnavailableError(states.status().message()));
  std::vector<slurm::ResumeStep> steps = slurm::PlanResume(planned->plan, *states);
  bool any = false;
  for (const auto& s : steps) any = any || s.resume;
  if (any && !o.dry_run) {
    if (auto st = CheckRights(o, "resume nodes"); !st.ok()) return PrintError(st);
  }
  int failed = 0;
  for (const auto& s : steps) {
    if (!s.resume) {
      std::printf("kept %s drained: %s\n", s.node.c_str(), s.why.c_str());
      continue;
    }
    auto argvs = OnKubernetes(o) ? slurm::KubectlResumeArgvs(o.kubectl, s.node)
                                 : std::vector<std::vector<std::string>>{slurm::ScontrolResumeArgv(o.scontrol, s.node)};
    if (!RunAll(o, "resume", s.node, argvs)) {
      ++failed;
      continue;
    }
    if (o.dry_run) continue;
    std::printf("resumed %s: %s\n", s.node.c_str(), s.why.c_str());
  }
  if (steps.empty()) std::printf("run %s: no node gdrbench drained to resume\n", planned->plan.run_id.c_str());
  return failed ? kDrainFailed : kDrainOk;
}

}  // namespace gdrbench::controller::cli
