#include "controller/cli/dry_run_text.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/cli/sweep_output.h"
#include "report/lane.h"
#include "report/report_util.h"

namespace gdrbench::controller::cli {
namespace {

std::string RailName(const run::Plan& plan, const schedule::Test& t) {
  const auto& a = plan.nodes[t.src].rails[t.rail].nic;
  const auto& b = plan.nodes[t.dst].rails[t.TargetRail()].nic;
  const std::string lane = gdrbench::report::LaneName(t.rail, t.TargetRail());
  if (a.empty() && b.empty()) return lane;
  return absl::StrFormat("%s %s>%s", lane, a.empty() ? "auto" : a, b.empty() ? "auto" : b);
}

std::string Plural(size_t n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

// "2 leaves per rail (leaf:)" / "none labelled (leaf:)": how many distinct
// labels each rail has, over the nodes that carry one.
std::string Labels(const inventory::Inventory& inv, size_t rails,
                   const inventory::RailLabel inventory::Node::*label, const char* key, const char* one,
                   const char* many) {
  std::set<size_t> counts;
  size_t labelled = 0;
  for (size_t r = 0; r < std::max<size_t>(rails, 1); ++r) {
    std::set<std::string> distinct;
    for (const auto& n : inv.nodes) {
      if (std::string l = (n.*label).Of(r); !l.empty()) distinct.insert(l);
    }
    counts.insert(distinct.size());
  }
  for (const auto& n : inv.nodes) labelled += (n.*label).empty() ? 0 : 1;
  if (labelled == 0) return absl::StrCat("no ", key, " labels");
  std::string per = counts.size() == 1 ? Plural(*counts.begin(), one, many)
                                       : absl::StrCat(*counts.begin(), " to ", *counts.rbegin(), " ", many);
  return absl::StrCat(per, " per rail (", key, " on ", labelled, " of ", inv.nodes.size(), " nodes)");
}

std::string InventoryLine(const run::Plan& plan, const inventory::Inventory& inv) {
  size_t listed = 0;
  for (const auto& n : inv.nodes) listed += n.rails.empty() ? 0 : 1;
  std::string rails = listed == inv.nodes.size() ? "rails listed for every node"
                      : listed == 0              ? "rails discovered from each agent (auto)"
                                    : absl::StrCat("rails listed for ", listed, " of ", inv.nodes.size(),
                                                   " nodes, the others discovered");
  const size_t r = RailCount(plan);
  return absl::StrCat(
      inv.source.empty() ? "(flags)" : inv.source, ": ", Plural(inv.nodes.size(), "node", "nodes"), ", ",
      rails, "; ", Labels(inv, r, &inventory::Node::leaf, "leaf:", "leaf", "leaves"), "; ",
      Labels(inv, r, &inventory::Node::spine_group, "spine_group:", "spine group", "spine groups"));
}

std::string SizesText(const v1::SweepParams& p) {
  std::vector<std::string> names;
  const auto& s = p.sizes_bytes();
  if (s.size() > 6) {
    return absl::StrCat(s.size(), " sizes, ", gdrbench::report::SizeName(s.Get(0)), " to ",
                        gdrbench::report::SizeName(s.Get(s.size() - 1)));
  }
  for (uint64_t b : s) names.push_back(gdrbench::report::SizeName(b));
  return absl::StrCat(names.size() == 1 ? "size " : "sizes ", absl::StrJoin(names, ", "));
}

std::string TestsLine(const v1::SweepParams& p) {
  const char* kind = p.test() == v1::TEST_KIND_WRITE_LAT ? "RDMA WRITE latency" : "RDMA WRITE bandwidth";
  std::string amount = p.duration_ns() > 0
                           ? absl::StrFormat("%.3g s per size", static_cast<double>(p.duration_ns()) / 1e9)
                           : absl::StrFormat("%u iterations per size", p.iterations());
  const char* cm = p.cm() == v1::CONNECTION_MODE_RDMA_CM ? "rdma_cm"
                   : p.cm() == v1::CONNECTION_MODE_OOB   ? "oob"
                                                         : "auto";
  if (p.warmup_iterations() > 0) absl::StrAppend(&amount, " (+", p.warmup_iterations(), " warm-up)");
  return absl::StrCat(kind, ", ", SizesText(p), ", ", amount, ", ", Plural(p.qps(), "QP", "QPs"),
                      ", connection ", cm, ", verify ", p.verify() ? "on" : "off");
}

std::string FileOrSystem(const std::string& file, const std::string& from, const char* flag) {
  return absl::StrCat(file, " (", from.empty() ? flag : from, ")");
}

std::string AgentsLine(const sweep::SweepConfig& c) {
  const rpc::ClientTlsConfig& t = c.tls ? *c.tls : c.inventory.tls;
  if (t.insecure) return "plaintext (--insecure): no TLS to the agents";
  std::string ca = t.ca_file.empty() ? "the system's roots" : FileOrSystem(t.ca_file, t.ca_from, "--tls-ca");
  std::string out = absl::StrCat("TLS, agents' certificates checked against ", ca);
  if (!t.cert_file.empty()) {
    absl::StrAppend(&out, "; client certificate ", FileOrSystem(t.cert_file, t.cert_from, "--tls-cert"),
                    ", key ", FileOrSystem(t.key_file, t.key_from, "--tls-key"), " (mTLS)");
  }
  if (!t.server_name.empty()) absl::StrAppend(&out, "; name checked: ", t.server_name);
  return out;
}

std::string ExpectLine(const inventory::Expectations& inv, const v1::PreflightExpectations& flags) {
  std::vector<std::string> e;
  auto text = [&](const char* key, const std::string& file, const std::string& flag) {
    const std::string& v = flag.empty() ? file : flag;
    if (!v.empty()) e.push_back(absl::StrCat(key, " ", v));
  };
  if (inv.gpus) e.push_back(absl::StrCat("gpus ", *inv.gpus));
  if (inv.rails) e.push_back(absl::StrCat("rails ", *inv.rails));
  if (inv.link_gbps) e.push_back(absl::StrFormat("link_gbps >= %g", *inv.link_gbps));
  text("link_state", inv.link_state, "");
  text("nvidia_driver", inv.nvidia_driver, flags.nvidia_driver());
  text("cuda_driver", inv.cuda_driver, flags.cuda_driver());
  text("rdma_core", inv.rdma_core, flags.rdma_core());
  text("ofed", inv.ofed, flags.ofed());
  text("hca_firmware", inv.hca_firmware, flags.hca_firmware());
  const uint32_t mtu = flags.min_mtu_bytes() ? flags.min_mtu_bytes() : inv.min_mtu_bytes;
  if (mtu) e.push_back(absl::StrCat("min_mtu ", mtu));
  if (!flags.rail_nics().empty())
    e.push_back(absl::StrCat("rail_nics ", absl::StrJoin(flags.rail_nics(), ",")));
  if (e.empty()) return "nothing beyond the preflight's own checks (no expect: section, no --expect-* flag)";
  return absl::StrJoin(e, ", ");
}

void PrintRounds(const run::Plan& plan, std::FILE* out) {
  const auto& s = plan.schedule;
  for (size_t r = 0; r < s.rounds(); ++r) {
    std::fprintf(out, "round %zu:", r);
    bool first = true;
    for (const auto& t : s.Round(r)) {
      std::fprintf(out, "%s %s%s%s [%s]", first ? "" : ",", plan.nodes[t.src].name.c_str(),
                   t.bidirectional ? "<->" : "->", plan.nodes[t.dst].name.c_str(), RailName(plan, t).c_str());
      first = false;
    }
    std::fputc('\n', out);
  }
}

// --mode cover | shift: the fabric plan beside its lower bound and beside
// all-pairs over the same nodes, and the cables it covers.
void PrintFabric(const run::Plan& plan, const schedule::EstimateParams& est, std::FILE* out) {
  const run::FabricPaths& f = *plan.fabric;
  const size_t n = plan.nodes.size();
  // all-pairs, one direction per sub-round: 2 (N - 1) rounds (N even), 2 N (odd).
  const double all_pairs_rounds = 2.0 * static_cast<double>(n % 2 == 0 ? n - 1 : n);
  std::fprintf(
      out,
      "fabric: %s (%s routing): %zu rounds planned, lower bound %d; all-pairs over the same %zu nodes: "
      "%.0f rounds, about %s\n",
      f.topology.c_str(), f.routing.c_str(), f.planned_rounds, f.lower_bound_rounds, n, all_pairs_rounds,
      DurationText(all_pairs_rounds * schedule::EstimateTestSeconds(est)).c_str());
  for (const std::string& line : sweep::PlannedCoverageLines(plan.fabric, 20))
    std::fprintf(out, "  %s\n", line.c_str());
}

}  // namespace

std::string DurationText(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "?";
  if (seconds < 10) return absl::StrFormat("%.2g s", seconds);
  auto t = static_cast<long long>(seconds + 0.5);
  if (t < 60) return absl::StrFormat("%lld s", t);
  if (t < 3600) return absl::StrFormat("%lld min %02lld s", t / 60, t % 60);
  t = (t + 30) / 60;
  return absl::StrFormat("%lld h %02lld min", t / 60, t % 60);
}

void PrintPlanSummary(const run::Plan& plan, const sweep::SweepConfig& c, const schedule::EstimateParams& est,
                      const std::string& basis, bool verbose, std::FILE* out) {
  const auto& s = plan.schedule;
  const auto& o = plan.schedule_options;
  const std::string mode = o.mode == schedule::Mode::kIncast ? absl::StrFormat("incast (fan-in %u)", o.fan_in)
                                                             : std::string(schedule::ModeName(o.mode));
  std::fprintf(out, "plan %s: %s, %zu nodes, %zu rail(s), %s, memory %s\n", plan.fingerprint.c_str(),
               mode.c_str(), plan.nodes.size(), RailCount(plan),
               o.bidirectional ? "bidirectional tests" : "one direction per sub-round", plan.memory.c_str());
  std::fprintf(out, "rounds: %zu, tests: %zu, at most %zu tests per round%s\n", s.rounds(), s.tests(),
               s.MaxRoundSize(),
               o.max_concurrent ? absl::StrFormat(" (cap %u)", o.max_concurrent).c_str() : "");
  std::fprintf(out, "estimated duration: %s (%zu rounds in sequence x %.3g s per test at %.4g Gb/s; %s)\n",
               DurationText(schedule::EstimateScheduleSeconds(s, est)).c_str(), s.rounds(),
               schedule::EstimateTestSeconds(est), est.link_gbps, basis.c_str());
  if (plan.fabric != nullptr) PrintFabric(plan, est, out);
  std::fprintf(out, "inventory: %s\n", InventoryLine(plan, c.inventory).c_str());
  std::fprintf(out, "tests: %s\n", TestsLine(plan.params).c_str());
  std::fprintf(out, "agents: %s\n", AgentsLine(c).c_str());
  std::fprintf(out, "expect: %s\n", ExpectLine(c.inventory.expect, c.expectations).c_str());
  for (const auto& n : plan.nodes) {
    if (n.excluded) std::fprintf(out, "left out: %s: %s\n", n.name.c_str(), n.excluded_reason.c_str());
  }
  if (verbose) {
    PrintRounds(plan, out);
  } else {
    std::fprintf(out, "round list: --verbose prints each round's tests (--json has them too)\n");
  }
}

}  // namespace gdrbench::controller::cli
