// The plan's estimate and what a finished run measured of its cost, and
// the QoS line the sweep prints.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sweep_limits.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::sweep {

schedule::EstimateParams Estimate(const SweepConfig& c) {
  schedule::EstimateParams e;
  const v1::SweepParams& p = c.params;
  e.sizes_bytes.assign(p.sizes_bytes().begin(), p.sizes_bytes().end());
  // Neither iterations nor a duration: the agent's default iterations.
  e.iterations = p.iterations() ? p.iterations() : (p.duration_ns() ? 0 : sweep_limits::kDefaultIterations);
  e.duration_ns = p.duration_ns();
  e.warmup_iterations = p.warmup_iterations();
  e.verify = p.verify();
  double rate = c.link_gbps;
  if (rate <= 0) {
    for (const auto& n : c.inventory.nodes) {
      if (n.link_gbps > 0 && (rate <= 0 || n.link_gbps < rate)) rate = n.link_gbps;
    }
  }
  e.link_gbps = rate > 0 ? rate : sweep_limits::kDefaultAssumedLinkGbps;
  // Incast: K senders share the target's port, each moves its data at 1/K of
  // it (the estimate and every test's deadline would be K times too short).
  // A measured rate is already what a cell got.
  e.link_gbps /= schedule::MaxFanIn(c.schedule);
  e.per_test_overhead_s = kDefaultSetupSeconds;
  if (c.measured && c.measured->gbps > 0) {
    e.per_test_overhead_s = c.measured->setup_s;
    e.link_gbps = c.measured->gbps;
  }
  return e;
}

absl::StatusOr<MeasuredCost> MeasureCost(const v1::Run& run) {
  MeasuredCost m;
  double setup = 0, wire_s = 0, bits = 0;
  for (const auto& p : run.pairs()) {
    if (p.status() != v1::RESULT_STATUS_OK || p.sizes().empty() || p.duration_ns() <= 0) continue;
    double test_wire = 0;
    for (const auto& s : p.sizes()) {
      test_wire += s.duration_ns() / 1e9;
      bits += 8.0 * static_cast<double>(s.size_bytes()) * static_cast<double>(s.iterations());
    }
    wire_s += test_wire;
    setup += std::max(0.0, p.duration_ns() / 1e9 - test_wire);
    ++m.tests;
  }
  if (m.tests == 0 || wire_s <= 0 || bits <= 0) {
    return absl::NotFoundError(absl::StrCat("run ", run.run_id(), " has no OK test with measured sizes"));
  }
  m.setup_s = setup / static_cast<double>(m.tests);
  m.gbps = bits / wire_s / 1e9;
  return m;
}

std::string DescribeQos(const SweepConfig& c, const FieldNames& names) {
  const v1::SweepParams& p = c.params;
  const inventory::Qos& q = c.inventory.qos;
  auto one = [&](absl::string_view what, bool given, uint32_t value, const std::optional<uint32_t>& inv,
                 absl::string_view name, absl::string_view key) -> std::string {
    if (given) {
      return absl::StrCat(
          what, " ", value, " (", name,
          inv && *inv != value ? absl::StrCat(", over the inventory's qos.", key, " ", *inv) : "", ")");
    }
    if (inv) return absl::StrCat(what, " ", *inv, " (the inventory's qos.", key, ")");
    return "";
  };
  std::vector<std::string> parts;
  for (std::string part :
       {one("service level", p.has_sl(), p.sl(), q.sl, names.sl, "sl"),
        one("traffic class", p.has_tclass(), p.tclass(), q.tclass, names.tclass, "tclass")}) {
    if (!part.empty()) parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace gdrbench::controller::sweep
