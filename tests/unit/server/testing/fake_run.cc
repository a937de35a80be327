#include "tests/unit/server/testing/fake_run.h"

#include <cstdio>
#include <cstdlib>

#include "controller/analysis/verdicts.h"
#include "controller/run/pair_tester.h"
#include "controller/run/plan.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"

namespace gdrbench::server::testing {

namespace run = controller::run;
namespace analysis = controller::analysis;

double DefaultModel(uint32_t src, uint32_t dst, const std::string&) {
  return 376.0 + (src * 7 + dst * 13) % 12;
}

v1::Run FakeRunStreaming(const FakeRunSpec& spec,
                         const std::function<void(const v1::PairResult&)>& on_pair) {
  run::FakeCluster cluster(spec.nodes, spec.rails, spec.link_gbps);
  cluster.SetBandwidth(spec.model ? spec.model : DefaultModel);
  cluster.SetSizes(spec.sizes);
  for (uint32_t n : spec.preflight_fail) cluster.SetPreflight(n, v1::CHECK_STATUS_FAIL);
  for (uint32_t n : spec.preflight_warn) cluster.SetPreflight(n, v1::CHECK_STATUS_WARN);
  controller::inventory::Inventory inv;
  for (uint32_t i = 0; i < spec.nodes; ++i) {
    inv.nodes.push_back({"node" + std::to_string(i), "fake" + std::to_string(i) + ":1", {}, 0, 0});
  }
  run::ProbeOptions po;
  po.parallelism = 2;
  run::ProbeResult probe = run::ProbeNodes(inv, cluster.agents(), po);
  v1::SweepParams params;
  for (uint64_t s : spec.sizes) params.add_sizes_bytes(s);
  params.set_iterations(1000);
  params.set_qps(1);
  controller::schedule::ScheduleOptions so;
  so.mode = spec.mode;
  so.quick_matchings = spec.quick_rounds;
  auto plan = run::MakePlan(probe.nodes, "host", so, params);
  if (!plan.ok()) {
    std::fprintf(stderr, "fake run: plan: %s\n", std::string(plan.status().message()).c_str());
    std::abort();
  }
  std::vector<std::string> names;
  for (const auto& n : plan->nodes) names.push_back(n.name);
  analysis::MatrixSet matrices(names, false);
  run::AgentPairTester tester(cluster.agents(), {});
  run::RunnerOptions ro;
  ro.parallelism = 2;
  ro.on_result = [&](const v1::PairResult& r, const controller::schedule::Test&) -> absl::Status {
    matrices.Add(r);
    on_pair(r);
    return absl::OkStatus();
  };
  if (absl::Status st = run::SweepRunner(*plan, tester, ro).Run(); !st.ok()) std::abort();
  v1::VerdictPolicy policy = analysis::DefaultPolicy();
  // As controller/sweep does: nodes left out (preflight FAIL) are named.
  std::vector<std::string> excluded;
  for (const auto& n : plan->nodes) {
    if (n.excluded) excluded.push_back(n.name + ": " + n.excluded_reason);
  }
  analysis::Outcome outcome = analysis::Judge(matrices, policy, nullptr, excluded);
  v1::Run out;
  out.set_run_id(spec.run_id);
  out.set_cluster(spec.cluster);
  out.mutable_started_at()->set_seconds(spec.started_unix_s);
  out.mutable_finished_at()->set_seconds(spec.started_unix_s + 60);
  out.set_mode("all-pairs");
  *out.mutable_params() = plan->params;
  *out.mutable_policy() = policy;
  for (const auto& info : probe.infos) *out.add_nodes() = info;
  if (!spec.preflight_fail.empty() || !spec.preflight_warn.empty()) {
    for (uint32_t i = 0; i < spec.nodes; ++i) {
      auto rep = cluster.agent(i)->RunPreflight({});
      if (rep.ok()) *out.add_preflight() = *rep;
    }
  }
  analysis::FillRun(matrices, outcome, &out);
  for (const auto& e : excluded) out.add_excluded_nodes(e);
  return out;
}

v1::Run FakeRun(const FakeRunSpec& spec) {
  std::vector<v1::PairResult> pairs;
  v1::Run out = FakeRunStreaming(spec, [&](const v1::PairResult& p) {
    if (spec.keep_pairs) pairs.push_back(p);
  });
  for (auto& p : pairs) *out.add_pairs() = std::move(p);
  return out;
}

}  // namespace gdrbench::server::testing
