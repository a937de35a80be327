// --mode cover | shift through the sweep library (controller/sweep/
// fabric_plan.h): the fabric plan's flows become the schedule's tests, rails
// are matched by the agents' port GUIDs (or the node description in a dry
// run), and the run says which cables its completed tests crossed.
//
// The fabric is a generated rail-optimized fat tree (topology/fat_tree.h,
// the DGX SuperPOD RA's shape scaled down: 8 nodes x 2 rails, 4 per leaf);
// the coverage is checked against an independent walk of the fabric's
// cables, not against the planner's own counts.
#include "controller/sweep/fabric_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"
#include "controller/topology/fat_tree.h"

namespace gdrbench::controller::sweep {
namespace {

using ::testing::HasSubstr;
namespace topo = topology;

constexpr uint32_t kNodes = 8, kRails = 2;

// The port GUID the test gives node i's rail r, on both sides: the fake
// agent's link-local GID and the fabric's CA port.
std::string Guid(uint32_t node, uint32_t rail) {
  return absl::StrFormat("0x00000000%04x%04x", node + 1, rail + 1);
}
std::string LinkLocalGid(uint32_t node, uint32_t rail) {
  return absl::StrFormat("fe80:0000:0000:0000:0000:0000:%04x:%04x", node + 1, rail + 1);
}

topo::FatTreeShape SmallShape() {
  topo::FatTreeShape s = topo::TwoTierShape(kNodes, kRails);
  s.hosts_per_leaf = 4;
  s.leaves_per_pod = 2;
  s.spines_per_pod = 2;
  s.leaf_spine_links = 2;
  return s;
}

// The generated fabric, its hosts ("node00003 mlx5_1") given port GUIDs.
topo::Fabric SmallFabric() {
  auto f = topo::GenerateFatTree(SmallShape());
  EXPECT_TRUE(f.ok()) << f.status();
  for (auto& [id, d] : f->devices) {
    if (d.kind != topo::DeviceKind::kHost) continue;
    unsigned node = 0, rail = 0;
    EXPECT_EQ(std::sscanf(d.description.c_str(), "node%u mlx5_%u", &node, &rail), 2) << d.description;
    d.port_guid = Guid(node, rail);
  }
  return *f;
}

std::shared_ptr<const FabricInput> Input(topo::Routing routing = topo::Routing::kFtree) {
  FabricInput in;
  in.fabric = SmallFabric();
  in.source = "fat-tree.txt";
  in.routing = routing;
  return std::make_shared<const FabricInput>(std::move(in));
}

// Fake agents whose NICs are InfiniBand ports with the GUIDs above.
void GiveGuids(run::FakeCluster& cluster) {
  for (uint32_t i = 0; i < cluster.size(); ++i) {
    cluster.EditNodeInfo(i, [i](v1::NodeInfo& info) {
      for (int n = 0; n < info.nics_size(); ++n) {
        for (auto& port : *info.mutable_nics(n)->mutable_ports()) {
          port.set_link_layer("InfiniBand");
          auto* gid = port.add_gids();
          gid->set_index(0);
          gid->set_gid(LinkLocalGid(i, static_cast<uint32_t>(n)));
        }
      }
    });
  }
}

SweepConfig Config(run::FakeCluster& cluster) {
  SweepConfig c;
  c.inventory.source = "test";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.parallel = 4;
  c.retest_low = 0;
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  c.schedule.mode = schedule::Mode::kCover;
  c.fabric = Input();
  return c;
}

// Cables per tier of the fabric, counted here from its cable list.
std::map<int, size_t> CablesPerTier(const topo::Fabric& f) {
  std::map<int, size_t> n;
  for (const topo::Cable& c : f.cables) ++n[c.tier];
  return n;
}

TEST(FabricSweep, CoverRunsThePlannedFlowsAndMeasuresEveryCable) {
  run::FakeCluster cluster(kNodes, kRails, 100);
  GiveGuids(cluster);
  SweepConfig c = Config(cluster);
  size_t planned_tests = 0;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> nics_in_round;
  SweepHooks h;
  h.on_start = [&](const SweepStart& s) {
    planned_tests = s.plan.schedule.tests();
    ASSERT_NE(s.plan.fabric, nullptr);
    for (const schedule::Test& t : s.plan.schedule.AllTests()) {
      EXPECT_FALSE(t.bidirectional);
      EXPECT_EQ(t.rail, t.TargetRail()) << "a rail plane's flows stay on their rail";
      const std::vector<uint32_t>* path = s.plan.fabric->Path(t);
      ASSERT_NE(path, nullptr);
      EXPECT_GE(path->size(), 2u);  // at least the two host cables
    }
  };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->passed()) << run->summary();
  EXPECT_EQ(run->mode(), "cover");
  EXPECT_EQ(static_cast<size_t>(run->pairs_size()), planned_tests);
  const v1::FabricCoverage& cov = run->coverage();
  EXPECT_EQ(cov.topology(), "fat-tree.txt");
  EXPECT_EQ(cov.routing(), "ftree");
  const auto per_tier = CablesPerTier(c.fabric->fabric);
  ASSERT_EQ(cov.tiers_size(), 2);
  EXPECT_EQ(cov.tiers(0).tier(), "host<->leaf");
  EXPECT_EQ(cov.tiers(0).total(), per_tier.at(0));
  EXPECT_EQ(cov.tiers(0).total(), kNodes * kRails);
  EXPECT_EQ(cov.tiers(0).measured(), cov.tiers(0).total());
  EXPECT_EQ(cov.tiers(1).total(), per_tier.at(1));
  EXPECT_EQ(cov.tiers(1).measured(), cov.tiers(1).total());
  EXPECT_EQ(cov.gaps_total(), 0u);
  EXPECT_GE(cov.planned_rounds(), cov.lower_bound_rounds());
  EXPECT_THAT(run->summary(), HasSubstr("cables measured (ftree"));
  EXPECT_THAT(run->summary(), HasSubstr("host<->leaf 16/16"));
}

// Switch counters as a site exports them (v1.SwitchCounters JSON), read
// before the first test and after the last: every cable end listed, all
// moving by 1 GB but one uplink (a routing surprise) and one host cable
// whose leaf port counted rx errors.
TEST(FabricSweep, SwitchCountersConfirmCablesAndNameTheOnesThatDisagree) {
  run::FakeCluster cluster(kNodes, kRails, 100);
  GiveGuids(cluster);
  SweepConfig c = Config(cluster);
  std::shared_ptr<const run::FabricPaths> paths;
  SweepHooks h;
  h.on_start = [&](const SweepStart& s) { paths = s.plan.fabric; };
  int reads = 0;
  int quiet = -1, noisy = -1;  // the uplink that does not move, the host cable with errors
  c.cable_counters = [&]() -> absl::StatusOr<std::string> {
    ++reads;
    std::string json = "{\"ports\": [";
    for (size_t i = 0; i < paths->cables.size(); ++i) {
      const run::FabricCable& cable = paths->cables[i];
      if (quiet < 0 && cable.tier == 1) quiet = static_cast<int>(i);
      if (noisy < 0 && cable.tier == 0) noisy = static_cast<int>(i);
      const uint64_t bytes = reads == 1 || static_cast<int>(i) == quiet ? 0 : 1'000'000'000;
      for (const run::CableEnd* end : {&cable.lower, &cable.upper}) {
        const uint64_t errors = reads == 2 && static_cast<int>(i) == noisy && end == &cable.upper ? 4 : 0;
        json += absl::StrFormat(
            R"(%s{"device": "%s", "port": "%s", "tx_bytes": %d, "rx_bytes": %d, "rx_errors": %d})",
            i == 0 && end == &cable.lower ? "" : ", ", end->devices.front(), end->port, bytes, bytes, errors);
      }
    }
    return json + "]}";
  };
  c.cable_counters_source = "test counters";
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(reads, 2);
  const v1::FabricCoverage& cov = run->coverage();
  EXPECT_EQ(cov.counters_source(), "test counters");
  EXPECT_EQ(cov.counters_error(), "");
  ASSERT_EQ(cov.counter_findings_size(), 2) << cov.DebugString();
  EXPECT_EQ(cov.counter_findings(0).cable(), paths->cables[noisy].name);
  EXPECT_EQ(cov.counter_findings(0).kind(), "errors");
  EXPECT_EQ(cov.counter_findings(1).cable(), paths->cables[quiet].name);
  EXPECT_EQ(cov.counter_findings(1).kind(), "no traffic");
  EXPECT_EQ(cov.tiers(0).counters_confirmed(), cov.tiers(0).measured());
  EXPECT_EQ(cov.tiers(1).counters_confirmed(), cov.tiers(1).measured() - 1);
  // Every cell read well; the cable with errors is blamed and fails the run.
  EXPECT_FALSE(run->passed());
  ASSERT_GE(run->blame_size(), 1);
  EXPECT_EQ(run->blame(run->blame_size() - 1).kind(), "cable");
  EXPECT_EQ(run->blame(run->blame_size() - 1).subject(), paths->cables[noisy].name);
  EXPECT_THAT(run->summary(), HasSubstr("2 counter finding(s)"));
}

TEST(FabricSweep, CountersThatCannotBeReadProveNothingAndSaySo) {
  run::FakeCluster cluster(kNodes, kRails, 100);
  GiveGuids(cluster);
  SweepConfig c = Config(cluster);
  c.cable_counters = []() -> absl::StatusOr<std::string> {
    return absl::UnavailableError("'fabric counters' exited 1: no such namespace");
  };
  c.cable_counters_source = "--cable-counters 'fabric counters'";
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->coverage().counters_error(), "'fabric counters' exited 1: no such namespace");
  EXPECT_EQ(run->coverage().tiers(0).counters_confirmed(), 0u);
  EXPECT_THAT(run->summary(),
              HasSubstr("switch counters not read ('fabric counters' exited 1: no such namespace): "
                        "no cable proven by them"));
}

TEST(FabricSweep, AnAgentDownLeavesItsCablesUnmeasuredWithTheReason) {
  run::FakeCluster cluster(kNodes, kRails, 100);
  GiveGuids(cluster);
  SweepConfig c = Config(cluster);
  c.fabric = [] {
    FabricInput in;
    in.fabric = SmallFabric();
    in.source = "fat-tree.txt";
    return std::make_shared<const FabricInput>(std::move(in));
  }();
  for (uint32_t i = 0; i < kNodes; ++i) {  // name the nodes as the fabric describes them
    c.inventory.nodes[i].name = absl::StrFormat("node%05u", i);
    c.inventory.nodes[i].rails = {{"mlx5_0", 0}, {"mlx5_1", 1}};
  }
  cluster.SetDown(5, true);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  const v1::FabricCoverage& cov = run->coverage();
  EXPECT_LT(cov.tiers(0).measured(), cov.tiers(0).total());
  ASSERT_GT(cov.gaps_total(), 0u);
  bool named = false;
  for (const v1::CableGap& g : cov.gaps()) {
    if (g.tier() != 0) continue;
    // Left out before the plan was made: planned around (its partners got others), its cables named.
    EXPECT_THAT(g.why(), HasSubstr("no planned flow: node00005 left out: agent unreachable"));
    named |= g.cable().find("node00005") != std::string::npos;
  }
  EXPECT_TRUE(named) << "node00005's host cables are the gaps";
  EXPECT_EQ(cov.tiers(0).measured(), cov.tiers(0).total() - kRails) << "every other host cable measured";
  EXPECT_EQ(cov.tiers(1).measured(), cov.tiers(1).total());
  EXPECT_FALSE(run->passed());
}

TEST(FabricSweep, DryRunMatchesByDescriptionAndListsHostPortsWithoutARail) {
  SweepConfig c;
  c.inventory.source = "inv.yaml";
  for (uint32_t i = 0; i < kNodes - 2; ++i) {  // nodes 6 and 7 are not in this sweep
    c.inventory.nodes.push_back(
        {absl::StrFormat("node%05u", i), "h:1", {{"mlx5_0", 0}, {"mlx5_1", 1}}, 0, 0});
  }
  c.schedule.mode = schedule::Mode::kCover;
  c.fabric = Input();
  auto plan = PlanWithoutAgents(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(plan->fabric, nullptr);
  EXPECT_GT(plan->schedule.tests(), 0u);
  for (const schedule::Test& t : plan->schedule.AllTests()) {
    EXPECT_LT(t.src, kNodes - 2);
    EXPECT_LT(t.dst, kNodes - 2);
  }
  // The host cables of nodes 6 and 7 (2 rails each) have no rail: named, with why.
  std::set<std::string> unplanned;
  for (const auto& [cable, why] : plan->fabric->not_planned) {
    if (plan->fabric->cables[cable].tier != 0) continue;
    EXPECT_EQ(why, "its host port matches no rail of the nodes (not run)");
    unplanned.insert(plan->fabric->cables[cable].name.substr(0, 9));
  }
  EXPECT_EQ(unplanned, (std::set<std::string>{"node00006", "node00007"}));
  const std::vector<std::string> lines = PlannedCoverageLines(plan->fabric, 20);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "host<->leaf: 12 / 16 cables planned");
}

TEST(FabricSweep, ModeAndTopologyMustGoTogether) {
  SweepConfig c;
  c.inventory.source = "inv.yaml";
  for (uint32_t i = 0; i < 4; ++i)
    c.inventory.nodes.push_back({absl::StrFormat("node%05u", i), "h:1", {}, 0, 0});
  c.schedule.mode = schedule::Mode::kCover;
  auto plan = PlanWithoutAgents(c);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("--mode cover plans on the fabric's cables: give --topology"));

  c.schedule.mode = schedule::Mode::kAllPairs;
  c.fabric = Input();
  plan = PlanWithoutAgents(c);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("--topology plans --mode cover or shift, not --mode all-pairs"));

  c.schedule.mode = schedule::Mode::kShift;
  c.fabric = Input(topo::Routing::kEcmp);
  plan = PlanWithoutAgents(c);
  EXPECT_THAT(plan.status().message(), HasSubstr("--mode shift plans under --routing ftree only"));
}

TEST(FabricSweep, NoRailMatchedIsAnErrorNamingWhy) {
  SweepConfig c;
  c.inventory.source = "inv.yaml";
  for (uint32_t i = 0; i < 4; ++i) {
    c.inventory.nodes.push_back({absl::StrFormat("gpu%02u", i), "h:1", {{"mlx5_0", 0}}, 0, 0});
  }
  c.schedule.mode = schedule::Mode::kCover;
  c.fabric = Input();
  auto plan = PlanWithoutAgents(c);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("no rail of the 4 nodes matched a host port"));
  EXPECT_THAT(plan.status().message(), HasSubstr("mlx5_0 of gpu00: no HCA described 'gpu00 mlx5_0'"));
  EXPECT_THAT(plan.status().message(), HasSubstr("and 1 more"));
}

TEST(FabricSweep, PortsFromAgentsReadTheLinkLocalGidsInterfaceId) {
  std::vector<run::PlanNode> nodes(1);
  nodes[0].name = "gpu07";
  v1::NodeInfo info;
  auto* nic = info.add_nics();
  nic->set_device("mlx5_3");
  auto* port = nic->add_ports();
  port->set_link_layer("InfiniBand");
  // ibv_devinfo -v prints a port's GID 0 so (rdma-core's ibv_devinfo.c, "%04x:" x 8).
  port->add_gids()->set_gid("fe80:0000:0000:0000:0c42:a103:0065:b7c4");
  auto* roce = info.add_nics();
  roce->set_device("mlx5_4");
  auto* rport = roce->add_ports();
  rport->set_link_layer("Ethernet");
  rport->set_netdev("ens1f0np0");
  rport->add_gids()->set_gid("fe80:0000:0000:0000:0e42:a1ff:fe65:b7c4");
  const AgentPorts p = PortsFromAgents(nodes, {info});
  EXPECT_EQ(p.guids.at({"gpu07", "mlx5_3"}), "0x0c42a1030065b7c4");
  EXPECT_EQ(p.guids.count({"gpu07", "mlx5_4"}), 0u) << "a RoCE GID's interface id is no port GUID";
  EXPECT_EQ(p.netdevs.at({"gpu07", "mlx5_4"}), "ens1f0np0");
}

}  // namespace
}  // namespace gdrbench::controller::sweep

namespace gdrbench::controller::sweep {
namespace {

// Issue 28 item 4 through the sweep: 12 nodes x 1 rail on 3 leaves of 4
// (2 spines, 2 cables each: a leaf's 4 uplinks), fake agents whose flows
// read low exactly when their ftree path crosses the bad cable. The run
// blames that cable (or NIC), never the nodes at the low flows' ends.
class Isolation : public ::testing::Test {
 protected:
  static constexpr uint32_t kN = 12;
  void SetUp() override {
    topo::FatTreeShape s = topo::TwoTierShape(kN, 1);
    s.hosts_per_leaf = 4;
    s.leaves_per_pod = 3;
    s.spines_per_pod = 2;
    s.leaf_spine_links = 2;
    auto f = topo::GenerateFatTree(s);
    ASSERT_TRUE(f.ok()) << f.status();
    fabric_ = *f;
    auto ix = topo::FabricIndex::Build(fabric_);
    ASSERT_TRUE(ix.ok()) << ix.status();
    index_ = *ix;
    host_of_.assign(kN, -1);
    for (int h = 0; h < index_.hosts(); ++h) {
      unsigned node = 0, rail = 0;
      ASSERT_EQ(std::sscanf(fabric_.devices.at(index_.HostId(h)).description.c_str(), "node%u mlx5_%u", &node,
                            &rail),
                2);
      host_of_[node] = h;
    }
  }

  // Runs a cover sweep with `bad` (a cable index) slow; returns the run.
  v1::Run Sweep(int bad, int broken_target = -1) {
    run::FakeCluster cluster(kN, 1, 100);
    if (broken_target >= 0) {
      cluster.SetOpenTargetError(static_cast<uint32_t>(broken_target),
                                 absl::ResourceExhaustedError("target busy"));
    }
    cluster.SetBandwidth([this, bad](uint32_t src, uint32_t dst, const std::string&) {
      for (topo::CableUse u : index_.FtreePath(host_of_[src], host_of_[dst])) {
        if (static_cast<int>(topo::CableOf(u)) == bad) return 30.0;
      }
      return 95.0;
    });
    SweepConfig c;
    c.inventory.source = "test";
    for (uint32_t i = 0; i < kN; ++i) {
      c.inventory.nodes.push_back(
          {absl::StrFormat("node%05u", i), "fake:1", {{"mlx5_0", std::nullopt}}, 0, 0});
    }
    c.agents = cluster.agents();
    c.parallel = 4;
    c.params.clear_sizes_bytes();
    c.params.add_sizes_bytes(65536);
    c.schedule.mode = schedule::Mode::kCover;
    FabricInput in;
    in.fabric = fabric_;
    in.source = "fat-tree.txt";
    c.fabric = std::make_shared<const FabricInput>(std::move(in));
    auto run = RunSweep(c);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : v1::Run{};
  }

  int CableOfTier(int tier, int nth) const {
    for (size_t i = 0; i < fabric_.cables.size(); ++i) {
      if (fabric_.cables[i].tier == tier && nth-- == 0) return static_cast<int>(i);
    }
    return -1;
  }

  topo::Fabric fabric_;
  topo::FabricIndex index_;
  std::vector<int> host_of_;
};

TEST_F(Isolation, AnUnshapedFabricBlamesNothing) {
  const v1::Run run = Sweep(-1);
  EXPECT_TRUE(run.passed()) << run.summary();
  EXPECT_EQ(run.blame_size(), 0);
  EXPECT_EQ(run.coverage().isolation_rounds(), 0u);
}

TEST_F(Isolation, ASlowUplinkIsNamedAsThatUplinkNotAsTheNodesBehindIt) {
  const int bad = CableOfTier(1, 5);
  ASSERT_GE(bad, 0);
  const v1::Run run = Sweep(bad);
  EXPECT_FALSE(run.passed());
  std::vector<std::string> kinds;
  for (const v1::Blame& b : run.blame()) kinds.push_back(b.kind() + ": " + b.subject());
  ASSERT_EQ(run.blame_size(), 1) << ::testing::PrintToString(kinds) << run.coverage().DebugString();
  EXPECT_EQ(run.blame(0).kind(), "cable");
  const topo::Cable& c = fabric_.cables[bad];
  EXPECT_THAT(run.blame(0).subject(), HasSubstr(absl::StrCat(" port ", c.lower.port, " -> ")));
  EXPECT_THAT(run.blame(0).subject(), HasSubstr(absl::StrCat(c.upper.device, " port ", c.upper.port)));
  EXPECT_EQ(run.coverage().unresolved_size(), 0);
  EXPECT_THAT(run.summary(), HasSubstr("isolation: 1 named in "));
}

// A test that did not complete (its target could not be opened) measured no
// cable: the isolator is not given it, and its cells keep their own blame.
TEST_F(Isolation, TestsThatErroredAreNoEvidenceAndKeepTheirBlame) {
  const int bad = CableOfTier(1, 5);
  const v1::Run run = Sweep(bad, 7);
  std::vector<std::string> kinds;
  for (const v1::Blame& b : run.blame()) kinds.push_back(b.kind() + ": " + b.subject());
  EXPECT_THAT(kinds, ::testing::Contains(HasSubstr("cable: "))) << ::testing::PrintToString(kinds);
  EXPECT_THAT(kinds, ::testing::Contains(HasSubstr("node00007"))) << ::testing::PrintToString(kinds);
  for (const v1::Blame& b : run.blame()) {
    if (b.kind() == "cable") EXPECT_THAT(b.reason(), ::testing::Not(HasSubstr("node00007")));
    // node00007's cells are the cell-level blame's (a node or link), never a cable or NIC finding.
    if (b.subject().find("node00007") != std::string::npos) EXPECT_NE(b.kind(), "nic") << b.reason();
  }
}

TEST_F(Isolation, ASlowHostCableIsNamedAsTheNicOrItsCable) {
  const int bad = index_.HostCable(host_of_[5]);
  const v1::Run run = Sweep(bad);
  EXPECT_FALSE(run.passed());
  std::vector<std::string> kinds;
  for (const v1::Blame& b : run.blame()) kinds.push_back(b.kind() + ": " + b.subject());
  ASSERT_EQ(run.blame_size(), 1) << ::testing::PrintToString(kinds) << run.coverage().DebugString();
  EXPECT_EQ(run.blame(0).kind(), "nic");
  EXPECT_THAT(run.blame(0).subject(), ::testing::StartsWith("node00005 mlx5_0 <-> "));
}

}  // namespace
}  // namespace gdrbench::controller::sweep
