// Inventory rails matched to the fabric's host ports (by port GUID, node
// description or LLDP port name), what `topology show` prints, and the
// format sniffing of LoadTopology, on the published dumps
// (tests/testdata/topology/README.md).
#include <string>

#include "controller/inventory/inventory.h"
#include "controller/topology/fabric.h"
#include "controller/topology/load.h"
#include "controller/topology/match.h"
#include "controller/topology/show.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::topology {
namespace {

using testing::HasSubstr;

const std::string kData = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/topology/";

inventory::Inventory Inv(const std::string& yaml) {
  auto inv = inventory::ParseInventoryYaml(yaml, "inv.yaml");
  EXPECT_TRUE(inv.ok()) << inv.status();
  return inv.ok() ? *inv : inventory::Inventory{};
}

TEST(MatchInventory, ByDescriptionByGuidAndWhatDidNotMatch) {
  auto f = LoadTopology(kData + "superbench-ibnetdiscover.txt", "auto", {});
  ASSERT_TRUE(f.ok()) << f.status();
  const auto inv = Inv(
      "nodes:\n"
      "  - name: RMD701091901003\n    rails: [{nic: ibp11s0f0}]\n"
      "  - name: RMD701091901019\n    rails: [{nic: mlx5_0}]\n"
      "  - name: gpu07\n    rails: [{nic: mlx5_3}]\n"
      "  - name: gpu08\n");
  // RMD701091901019's HCA is described "... ibp11s0f0", not mlx5_0; its agent's GUID finds it.
  const KnownGuids guids = {{{"RMD701091901019", "mlx5_0"}, "0xff08c43217299f2"},
                            {{"gpu07", "mlx5_3"}, "0x00000000deadbeef"}};
  const Match m = MatchInventory(*f, inv, "fabric.txt", guids);
  ASSERT_EQ(m.rails.size(), 4u);
  EXPECT_TRUE(m.rails[0].found);
  EXPECT_EQ(m.rails[0].port, (PortRef{"H-0ff08c4321664e96", 1}));
  EXPECT_TRUE(m.rails[1].found) << m.rails[1].why;
  EXPECT_EQ(m.rails[1].port, (PortRef{"H-0ff08c43217299f2", 1}));
  EXPECT_FALSE(m.rails[2].found);
  EXPECT_EQ(m.rails[2].why, "mlx5_3 of gpu07: no port GUID 0x00000000deadbeef in the topology (fabric.txt)");
  EXPECT_FALSE(m.rails[3].found);
  EXPECT_THAT(m.rails[3].why, HasSubstr("gpu08: the inventory lists no rails"));
  EXPECT_EQ(m.found(), 2u);
  EXPECT_EQ(m.cables_without_node.size(), 8u);  // 10 host cables, 2 claimed
}

TEST(MatchInventory, ADescriptionMissNamesWhatWasLookedFor) {
  auto f = LoadTopology(kData + "ib2neo4j-iblinkinfo-line.txt", "auto", {});
  ASSERT_TRUE(f.ok()) << f.status();
  const auto inv = Inv("nodes:\n  - name: thing4\n    rails: [{nic: HCA-1}, {nic: HCA-2}]\n");
  const Match m = MatchInventory(*f, inv, "links.txt");
  EXPECT_TRUE(m.rails[0].found);
  EXPECT_EQ(m.rails[1].why,
            "HCA-2 of thing4: no HCA described 'thing4 HCA-2' and no port HCA-2 of a host thing4 in the topology "
            "(links.txt)");
  EXPECT_EQ(m.cables_without_node.size(), 2u);
}

TEST(MatchInventory, LldpPortsByInterfaceName) {
  auto f = LoadTopology(kData + "lldp", "auto", {"ns-1.example.com"});
  ASSERT_TRUE(f.ok()) << f.status();
  const auto inv = Inv("nodes:\n  - name: ns-1.example.com\n    rails: [{nic: eth0}]\n");
  const Match m = MatchInventory(*f, inv, "lldp");
  EXPECT_TRUE(m.rails[0].found) << m.rails[0].why;
  EXPECT_TRUE(m.cables_without_node.empty());
}

TEST(TopologyShow, PrintsSwitchesCablesPerTierNodesNotFoundAndCablesWithoutANode) {
  auto f = LoadTopology(kData + "superbench-ibnetdiscover.txt", "ibnetdiscover", {});
  ASSERT_TRUE(f.ok()) << f.status();
  const auto inv = Inv("nodes:\n  - name: RMD701091901003\n    rails: [{nic: ibp11s0f0}]\n"
                       "  - name: gpu07\n    rails: [{nic: mlx5_3}]\n");
  const Match m = MatchInventory(*f, inv, "fabric.txt");
  const std::string out = RenderFabric(*f, "fabric.txt", &m);
  EXPECT_THAT(out, HasSubstr("topology fabric.txt: 8 switches, 11 host ports, 18 cables\n"));
  EXPECT_THAT(out, HasSubstr("  tier 1 (leaves): 5\n"));
  EXPECT_THAT(out, HasSubstr("    S-0ff08c43215bae48 \"MF0;rmd70-0101-0919-01ib0:MQM8700/U1\"  "));
  EXPECT_THAT(out, HasSubstr("  host<->leaf: 10 (10 at 200 Gb/s)\n"));
  EXPECT_THAT(out, HasSubstr("  leaf<->spine: 5 (5 at 200 Gb/s)\n"));
  EXPECT_THAT(out, HasSubstr("  spine<->core: 2 (2 at 200 Gb/s)\n"));
  EXPECT_THAT(out, HasSubstr("  untiered (an end has no record of its own): 1"));
  EXPECT_THAT(out, HasSubstr("rails matched: 1 of 2\nnodes not found: 1\n  mlx5_3 of gpu07: no HCA described"));
  EXPECT_THAT(out, HasSubstr("cables without a node: 9\n  H-"));
  EXPECT_THAT(RenderFabric(*f, "fabric.txt", nullptr), testing::Not(HasSubstr("nodes not found")));
}

TEST(LoadTopology, FormatErrors) {
  EXPECT_THAT(std::string(LoadTopology(kData + "lldp", "csv", {}).status().message()),
              HasSubstr("--topology-format csv: expected auto, ibnetdiscover, iblinkinfo or lldp"));
  EXPECT_EQ(LoadTopology("/nonexistent/f.txt", "auto", {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(LoadTopology(kData + "lldp", "auto", {}).status().message()),
              HasSubstr("needs the inventory"));
}

}  // namespace
}  // namespace gdrbench::controller::topology
