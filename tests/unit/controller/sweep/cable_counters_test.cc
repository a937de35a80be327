// Switch port counters against the plan's loads (controller/sweep/
// cable_counters.h). The JSON is v1.SwitchCounters' proto3 JSON mapping
// (run.proto), the counters' meaning the kernel's
// Documentation/ABI/testing/sysfs-class-net-statistics (tx_bytes, rx_bytes,
// rx_errors, tx_errors, rx_dropped, tx_dropped: cumulative, per interface),
// which is what the lab's `fabric counters` reads.
#include "controller/sweep/cable_counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::sweep {
namespace {

using ::testing::HasSubstr;

run::FabricPaths Paths() {
  run::FabricPaths p;
  p.tier_names = {"host<->leaf", "leaf<->spine"};
  // 0: node1's host cable, 1: leaf1's uplink to spine1, 2: leaf1's uplink to spine2, 3: node2's host cable
  p.cables = {
      {"node1 rxe1 -> leaf1 port swp1", 0, "t:1", {{"node1"}, "veth1"}, {{"leaf1", "L-1"}, "swp1"}},
      {"leaf1 port up1 -> spine1 port down1", 1, "t:2", {{"leaf1", "L-1"}, "up1"}, {{"spine1"}, "down1"}},
      {"leaf1 port up2 -> spine2 port down1", 1, "t:3", {{"leaf1", "L-1"}, "up2"}, {{"spine2"}, "down1"}},
      {"node2 rxe2 -> leaf1 port swp2", 0, "t:4", {{"node2"}, "veth2"}, {{"leaf1", "L-1"}, "swp2"}},
  };
  return p;
}

v1::FabricCoverage Tiers() {
  v1::FabricCoverage c;
  c.add_tiers()->set_tier("host<->leaf");
  c.add_tiers()->set_tier("leaf<->spine");
  return c;
}

v1::SwitchCounters Parse(const std::string& json) {
  auto c = ParseSwitchCounters(json, "t.json");
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : v1::SwitchCounters{};
}

TEST(ParseSwitchCounters, ReadsTheExportAndRefusesWhatItCannotTrust) {
  const v1::SwitchCounters c = Parse(
      R"({"ports": [{"device": "leaf1", "port": "swp1", "tx_bytes": 1000, "rx_bytes": "2000", "rx_errors": 1}]})");
  ASSERT_EQ(c.ports_size(), 1);
  EXPECT_EQ(c.ports(0).rx_bytes(), 2000u);  // proto3 JSON: a uint64 as a string too
  auto bad =
      ParseSwitchCounters(R"({"ports": [{"device": "leaf1", "port": "swp1", "tx_octets": 1}]})", "t.json");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("t.json: not switch counters JSON"));
  bad = ParseSwitchCounters(R"({"ports": [{"device": "leaf1"}]})", "t.json");
  EXPECT_EQ(bad.status().message(), "t.json: ports[0]: no port");
  bad = ParseSwitchCounters(R"({"ports": [{"device": "a", "port": "1"}, {"device": "a", "port": "1"}]})",
                            "t.json");
  EXPECT_EQ(bad.status().message(), "t.json: ports[1]: a 1 again (first at ports[0])");
  bad = ParseSwitchCounters("not json", "t.json");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JudgeCableCounters, ConfirmsMovedCablesAndNamesEveryOtherCase) {
  const run::FabricPaths paths = Paths();
  std::vector<CableLoad> loads(4);
  loads[0].bytes[0] = 1'000'000;  // node1 sends 1 MB up its host cable ...
  loads[0].flows[0] = 1;
  loads[1].bytes[0] = 1'000'000;  // ... up leaf1's first uplink (the model's path)
  loads[1].flows[0] = 1;
  loads[3].bytes[1] = 1'000'000;  // ... and down to node2
  loads[3].flows[1] = 1;
  // The fabric really sent it over the second uplink; node2's cable is missing from the
  // counters; the first uplink's spine end had errors; node1's host end went back.
  const v1::SwitchCounters before = Parse(R"({"ports": [
      {"device": "L-1", "port": "swp1", "rx_bytes": 500},
      {"device": "leaf1", "port": "up1", "tx_bytes": 0},
      {"device": "spine1", "port": "down1", "rx_bytes": 0, "rx_errors": 3},
      {"device": "leaf1", "port": "up2", "tx_bytes": 0},
      {"device": "spine2", "port": "down1", "rx_bytes": 0}]})");
  const v1::SwitchCounters after = Parse(R"({"ports": [
      {"device": "L-1", "port": "swp1", "rx_bytes": 1100500},
      {"device": "leaf1", "port": "up1", "tx_bytes": 1200},
      {"device": "spine1", "port": "down1", "rx_bytes": 1200, "rx_errors": 5},
      {"device": "leaf1", "port": "up2", "tx_bytes": 1100000},
      {"device": "spine2", "port": "down1", "rx_bytes": 1100000}]})");
  v1::FabricCoverage c = Tiers();
  JudgeCableCounters(paths, loads, before, after, &c);
  ASSERT_EQ(c.counter_findings_size(), 3) << c.DebugString();
  EXPECT_EQ(c.counter_findings(0).cable(), "leaf1 port up1 -> spine1 port down1");
  EXPECT_EQ(c.counter_findings(0).kind(), "errors");
  EXPECT_EQ(c.counter_findings(0).detail(), "2 rx/tx errors during the run");
  EXPECT_EQ(c.counter_findings(1).kind(), "no traffic");
  EXPECT_EQ(c.counter_findings(1).detail(),
            "expected >= 500.0 kB up (1 completed flow, 1.0 MB); the counters moved leaf1 up1 tx +1200 B, "
            "spine1 down1 rx +1200 B");
  EXPECT_EQ(c.counter_findings(2).cable(), "node2 rxe2 -> leaf1 port swp2");
  EXPECT_EQ(c.counter_findings(2).kind(), "not in the counters");
  // node1's cable: its host end is absent, the leaf end (found by the leaf's other name) moved.
  EXPECT_EQ(c.tiers(0).counters_confirmed(), 1u);
  EXPECT_EQ(c.tiers(1).counters_confirmed(),
            0u);  // the unloaded uplink carried traffic but is not "confirmed"

  // A counter lower after than before is not judged as no traffic: it is named.
  v1::SwitchCounters reset = after;
  reset.mutable_ports(0)->set_rx_bytes(10);
  v1::FabricCoverage r = Tiers();
  JudgeCableCounters(paths, loads, before, reset, &r);
  EXPECT_EQ(r.counter_findings(0).cable(), "node1 rxe1 -> leaf1 port swp1");
  EXPECT_EQ(r.counter_findings(0).kind(), "counters went back");
  EXPECT_EQ(r.counter_findings_size(), 4);  // and cable 1's two, cable 3's one, as above
  EXPECT_EQ(r.tiers(0).counters_confirmed(), 0u);
}

}  // namespace
}  // namespace gdrbench::controller::sweep
