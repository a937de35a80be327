#include "controller/run/probe.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/run/expectations.h"
#include "controller/run/port_state.h"
#include "report/left_out.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {
namespace {

bool Owned(const v1::NodeInfo& info, const std::string& dev) {
  if (info.devices_owned().empty()) return true;
  return std::find(info.devices_owned().begin(), info.devices_owned().end(), dev) !=
         info.devices_owned().end();
}

}  // namespace

std::vector<inventory::Rail> RailsFromNodeInfo(const v1::NodeInfo& info, bool all_nics) {
  std::vector<inventory::Rail> rails;
  std::set<std::string> seen;
  for (const auto& r : info.rails()) {
    if (!Owned(info, r.nic_device()) || !seen.insert(r.nic_device()).second) continue;
    rails.push_back({r.nic_device(), r.gpu_index()});
  }
  if (!rails.empty() && !all_nics) return rails;
  size_t gpu_rails = rails.size();
  for (const auto& nic : info.nics()) {
    if (!Owned(info, nic.device())) continue;
    bool active = std::any_of(nic.ports().begin(), nic.ports().end(),
                              [](const v1::RdmaPort& p) { return PortStateOf(p) == v1::PORT_STATE_ACTIVE; });
    if (active && seen.insert(nic.device()).second) rails.push_back({nic.device(), std::nullopt});
  }
  std::sort(rails.begin() + gpu_rails, rails.end(), [](const auto& a, const auto& b) { return a.nic < b.nic; });
  return rails;
}

double LinkRateGbps(const v1::NodeInfo& info, const std::string& nic) {
  for (const auto& n : info.nics()) {
    if (n.device() != nic) continue;
    for (const auto& p : n.ports()) {
      if (PortStateOf(p) == v1::PORT_STATE_ACTIVE) return p.active_rate_gbps();
    }
  }
  return 0;
}

namespace {

// A node whose agent did not answer GetNodeInfo: left out, with a failed
// agent_reachable check; its rails keep the inventory's rate.
void MarkUnreachable(const inventory::Node& in, const absl::Status& st, PlanNode& pn,
                     v1::PreflightReport& pre) {
  pn.excluded = true;
  pn.excluded_reason = absl::StrCat("agent unreachable: ", st.message());
  pre.set_overall(v1::CHECK_STATUS_FAIL);
  auto* c = pre.add_checks();
  c->set_id("agent_reachable");
  c->set_status(v1::CHECK_STATUS_FAIL);
  c->set_summary(std::string(st.message()));
  // The remedy for this cause (a timeout is not a certificate), as the
  // run's left-out summary gives it.
  const std::optional<report::LeftOutCause> cause = report::ClassifyLeftOut(pn.excluded_reason);
  c->set_remediation(cause ? absl::StrCat(cause->remedy, " (", in.name, ", ", in.address, ")")
                           : absl::StrCat("start gdrbench-agent on ", in.name, " (", in.address,
                                          ") and check the port and TLS settings"));
  if (pn.rails.empty()) pn.rails.push_back({});
  pn.rail_gbps.assign(pn.rails.size(), in.link_gbps);
}

// The node's rails (the inventory's, else the agent's) and their rates; a
// node without one is left out.
void SetRails(const inventory::Node& in, const v1::NodeInfo& info, const ProbeOptions& options,
              PlanNode& pn) {
  if (pn.rails.empty()) pn.rails = RailsFromNodeInfo(info, options.all_nics);
  if (pn.rails.empty()) {
    pn.excluded = true;
    pn.excluded_reason = absl::StrCat(
        "no active RDMA NIC (",
        info.nics_absent_reason().empty() ? "no port is PORT_ACTIVE" : info.nics_absent_reason(), ")");
    pn.rails.push_back({});
  }
  for (const auto& r : pn.rails) {
    pn.rail_gbps.push_back(in.link_gbps > 0 ? in.link_gbps : LinkRateGbps(info, r.nic));
  }
}

// The controller's expectations (GPUs, rails, link rates) checked on the
// node; a failure leaves it out unless --force.
void CheckNodeExpectations(const ProbeOptions& options, const v1::NodeInfo& info, PlanNode& pn,
                           v1::PreflightReport& pre) {
  if (!options.expect.controller_checks()) return;
  v1::CheckResult c = CheckExpectations(options.expect, info, pn.rails);
  const bool failed = c.status() == v1::CHECK_STATUS_FAIL;
  *pre.add_checks() = c;
  if (failed) pre.set_overall(v1::CHECK_STATUS_FAIL);
  if (failed && !options.force && !pn.excluded) {
    pn.excluded = true;
    pn.excluded_reason = c.summary();
  }
}

// The agent's preflight of the node into `pre`; a failed one (or one that
// did not run) leaves the node out unless --force.
void RunNodePreflight(const inventory::Node& in, AgentApi& agent, const ProbeOptions& options,
                      bool named_rails, PlanNode& pn, v1::PreflightReport& pre) {
  v1::RunPreflightRequest req;
  *req.mutable_expectations() = options.expectations;
  if (named_rails) {
    // NICs the inventory names are rails: the agent judges them as such.
    for (const auto& r : pn.rails) {
      if (!r.nic.empty()) req.mutable_expectations()->add_rail_nics(r.nic);
    }
  }
  auto report = agent.RunPreflight(req);
  if (!report.ok()) {
    pre.set_overall(report.status().code() == absl::StatusCode::kUnimplemented ? v1::CHECK_STATUS_SKIP
                                                                               : v1::CHECK_STATUS_FAIL);
    auto* c = pre.add_checks();
    c->set_id("preflight_ran");
    c->set_status(pre.overall());
    c->set_summary(std::string(report.status().message()));
    if (pre.overall() == v1::CHECK_STATUS_FAIL && !pn.excluded && !options.force) {
      pn.excluded = true;
      pn.excluded_reason = absl::StrCat("preflight did not run: ", report.status().message());
    }
    return;
  }
  pre = *report;
  // Keyed by the inventory's name, like every per-node result: several
  // agents may share one host (or be listed by IP); the agent's own
  // hostname stays in its NodeInfo.
  pre.set_hostname(in.name);
  if (pre.overall() == v1::CHECK_STATUS_FAIL && !options.force && !pn.excluded) {
    std::vector<std::string> failed;
    for (const auto& c : pre.checks()) {
      if (c.status() == v1::CHECK_STATUS_FAIL) failed.push_back(c.id());
    }
    pn.excluded = true;
    pn.excluded_reason = absl::StrCat("preflight FAIL (", absl::StrJoin(failed, ", "), ")");
  }
}

// One node: its agent's NodeInfo, rails, preflight and expectations.
void ProbeNode(const inventory::Node& in, AgentApi& agent, const ProbeOptions& options, PlanNode& pn,
               v1::NodeInfo& info_out, v1::PreflightReport& pre) {
  pn.name = in.name;
  pn.address = in.address;
  pn.rails = in.rails;
  pre.set_hostname(in.name);
  auto info = agent.GetNodeInfo();
  if (!info.ok()) {
    MarkUnreachable(in, info.status(), pn, pre);
    return;
  }
  info_out = *info;
  const bool named_rails = !pn.rails.empty();  // the inventory names this node's rails
  SetRails(in, *info, options, pn);
  if (options.preflight) RunNodePreflight(in, agent, options, named_rails, pn, pre);
  // Runs last, whatever happened to the preflight: its result joins the report.
  CheckNodeExpectations(options, *info, pn, pre);
}

}  // namespace

ProbeResult ProbeNodes(const inventory::Inventory& inv, const std::vector<AgentApi*>& agents,
                       const ProbeOptions& options) {
  const size_t n = inv.nodes.size();
  ProbeResult out;
  out.nodes.resize(n);
  out.infos.resize(n);
  out.preflight.resize(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      if (options.cancel != nullptr && options.cancel->cancelled()) return;
      ProbeNode(inv.nodes[i], *agents[i], options, out.nodes[i], out.infos[i], out.preflight[i]);
    }
  };
  size_t threads = std::max<size_t>(1, std::min<size_t>(options.parallelism, n));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& pn : out.nodes) {
    if (pn.excluded) spdlog::warn("node {} left out: {}", pn.name, pn.excluded_reason);
  }
  return out;
}

}  // namespace gdrbench::controller::run
