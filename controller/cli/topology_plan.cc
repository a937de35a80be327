#include "controller/cli/topology_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/topology/show.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::cli {
namespace {

namespace topo = topology;

std::string CableText(const topo::Fabric& f, int cable) {
  const topo::Cable& c = f.cables[cable];
  return absl::StrCat(c.lower.device, "[", c.lower.port, "] -> ", c.upper.device, "[", c.upper.port, "]");
}

google::protobuf::Value Str(const std::string& s) {
  google::protobuf::Value v;
  v.set_string_value(s);
  return v;
}

google::protobuf::Value Num(double n) {
  google::protobuf::Value v;
  v.set_number_value(n);
  return v;
}

}  // namespace

std::string PlanText(const topo::Fabric& f, const topo::FabricIndex& ix, const topo::CoverPlan& plan,
                     const std::string& mode, const std::string& routing) {
  std::string out = absl::StrCat("plan: ", mode, " under ", routing, " routing: ", plan.rounds.size(),
                                 " rounds (lower bound ", plan.lower_bound, "), ", plan.flows(), " flows over ",
                                 ix.hosts(), " host ports\n");
  for (size_t t = 0; t < plan.tiers.size(); ++t) {
    const topo::TierCoverage& c = plan.tiers[t];
    if (c.total == 0) continue;
    if (routing == "ecmp" && t > 0) {
      absl::StrAppend(&out, "  ", topo::CableTierName(static_cast<int>(t)), ": ", c.total,
                      absl::StrFormat(" cables, each carrying a flow with probability >= %.4f (by hash: %.2f flows "
                                      "per uplink per round expected)\n",
                                      plan.ecmp_min_probability, c.expected_per_round));
      continue;
    }
    absl::StrAppend(&out, "  ", topo::CableTierName(static_cast<int>(t)), ": ", c.covered, " / ", c.total,
                    " cables covered");
    if (c.covered > 0) {
      absl::StrAppend(&out, absl::StrFormat(", %.2f flows per cable over the plan, at most %d per direction "
                                            "per round",
                                            c.mean_flows, c.max_per_round));
    }
    absl::StrAppend(&out, "\n");
  }
  if (routing == "ecmp") {
    absl::StrAppend(&out, absl::StrFormat("  every uplink carries a flow with probability >= %.4f\n",
                                          plan.ecmp_min_probability));
  }
  absl::StrAppend(&out, "cables not covered: ", plan.uncovered.size(), "\n");
  for (const topo::UncoveredCable& u : plan.uncovered) {
    absl::StrAppend(&out, "  ", CableText(f, u.cable), " (", f.cables[u.cable].where, "): ", u.why, "\n");
  }
  return out;
}

absl::StatusOr<std::string> PlanJson(const topo::Fabric& f, const topo::FabricIndex& ix, const topo::CoverPlan& plan,
                     const std::string& mode, const std::string& routing) {
  google::protobuf::Struct root;
  auto& fields = *root.mutable_fields();
  fields["mode"] = Str(mode);
  fields["routing"] = Str(routing);
  fields["lower_bound"] = Num(plan.lower_bound);
  auto* rounds = fields["rounds"].mutable_list_value();
  for (const auto& round : plan.rounds) {
    auto* flows = rounds->add_values()->mutable_list_value();
    for (const topo::PlannedFlow& flow : round) {
      auto& fl = *flows->add_values()->mutable_struct_value()->mutable_fields();
      fl["src"] = Str(f.devices.at(ix.HostId(flow.src)).description);
      fl["dst"] = Str(f.devices.at(ix.HostId(flow.dst)).description);
      auto* cables = fl["cables"].mutable_list_value();
      for (topo::CableUse u : flow.cables) {
        auto& c = *cables->add_values()->mutable_struct_value()->mutable_fields();
        c["cable"] = Str(CableText(f, topo::CableOf(u)));
        c["tier"] = Num(f.cables[topo::CableOf(u)].tier);
        c["direction"] = Str(topo::Downward(u) ? "down" : "up");
      }
    }
  }
  auto* tiers = fields["tiers"].mutable_list_value();
  for (size_t t = 0; t < plan.tiers.size(); ++t) {
    auto& tf = *tiers->add_values()->mutable_struct_value()->mutable_fields();
    tf["tier"] = Str(topo::CableTierName(static_cast<int>(t)));
    tf["covered"] = Num(plan.tiers[t].covered);
    tf["total"] = Num(plan.tiers[t].total);
    tf["expected_flows_per_round"] = Num(plan.tiers[t].expected_per_round);
  }
  auto* uncovered = fields["uncovered"].mutable_list_value();
  for (const topo::UncoveredCable& u : plan.uncovered) {
    auto& uf = *uncovered->add_values()->mutable_struct_value()->mutable_fields();
    uf["cable"] = Str(CableText(f, u.cable));
    uf["why"] = Str(u.why);
  }
  if (routing == "ecmp") fields["ecmp_min_probability"] = Num(plan.ecmp_min_probability);
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = false;
  if (auto st = google::protobuf::util::MessageToJsonString(root, &json, opts); !st.ok()) {
    return absl::InternalError(absl::StrCat("the plan as JSON: ", st.ToString()));
  }
  return json + "\n";
}

}  // namespace gdrbench::controller::cli
