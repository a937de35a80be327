// Nodes keyed by their agent's HOST:PORT (issue 12, item 14): several agents
// per kernel on different ports are a documented use; two names for one
// address would test an agent against itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/inventory/inventory.h"
#include "controller/inventory/resolver.h"

namespace gdrbench::controller::inventory {
namespace {

using ::testing::HasSubstr;

TEST(InventoryKeys, OneHostWithTwoPortsIsTwoNodesNamedByAddress) {
  auto inv = InventoryFromHostlist("127.0.0.1:7001,127.0.0.1:7002", 7070);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 2u);
  EXPECT_EQ(inv->nodes[0].address, "127.0.0.1:7001");
  EXPECT_EQ(inv->nodes[0].name, "127.0.0.1:7001");
  EXPECT_EQ(inv->nodes[1].name, "127.0.0.1:7002");
}

TEST(InventoryKeys, DistinctHostsKeepTheirNames) {
  auto inv = InventoryFromHostlist("n[1-2]:7001", 7070);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->nodes[0].name, "n1");
  EXPECT_EQ(inv->nodes[1].address, "n2:7001");
}

TEST(InventoryKeys, OneAddressTwiceIsRefused) {
  auto inv = InventoryFromHostlist("127.0.0.1:7001,127.0.0.1:7001", 7070);
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr("'127.0.0.1:7001' listed twice"));
}

TEST(InventoryKeys, TwoInventoryNamesWithOneAddressAreRefused) {
  SystemResolver resolver;
  auto inv = ParseInventoryYaml("nodes:\n  - name: a\n    address: 10.0.0.1:7070\n  - name: b\n    address: 10.0.0.1:7070\n",
                                "inv.yaml", resolver);
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(std::string(inv.status().message()),
              HasSubstr("node 'b' has the address of node 'a' (10.0.0.1:7070)"));
}

// Item 16: a NUL or ESC in a name is refused where it enters.
TEST(InventoryKeys, ControlBytesInANodeNameAreRefused) {
  auto inv = ParseInventoryYaml("nodes:\n  - name: \"a\\0b\\e[2J\"\n", "inv.yaml");
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr("node name 'a\\x00b\\x1b[2J' holds control bytes"));
}

// Item 9: 'n[1-1048576]' and two large elements ended in bad_alloc.
TEST(InventoryKeys, PlansPastTheNodeCapAreOneSentence) {
  for (const char* expr : {"n[1-1048576]", "a[1-20000],b[1-20000]"}) {
    auto inv = InventoryFromHostlist(expr, 7070);
    ASSERT_FALSE(inv.ok()) << expr;
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr("32768")) << expr;
  }
}

// Issue 34: the fabric's class for test traffic (NCCL_IB_SL / NCCL_IB_TC),
// bounded as perftest's -S and --tclass.
TEST(InventoryKeys, QosGivesTheFabricsServiceLevelAndTrafficClass) {
  auto inv = ParseInventoryYaml("qos:\n  sl: 3\n  tclass: 106\nnodes:\n  - name: a\n", "inv.yaml");
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->qos.sl, 3u);
  EXPECT_EQ(inv->qos.tclass, 106u);
  auto none = ParseInventoryYaml("nodes:\n  - name: a\n", "inv.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->qos.sl.has_value());
  EXPECT_FALSE(none->qos.tclass.has_value());
  const std::pair<const char*, const char*> bad[] = {
      {"qos:\n  sl: 16\nnodes:\n  - name: a\n", "inv.yaml:2: qos.sl: expected an integer in 0..15, got '16'"},
      {"qos:\n  tclass: 256\nnodes:\n  - name: a\n",
       "inv.yaml:2: qos.tclass: expected an integer in 0..255, got '256'"},
      {"qos:\n  tclass: -1\nnodes:\n  - name: a\n", "inv.yaml:2: qos.tclass: expected an integer in 0..255"},
      {"qos:\n  dscp: 26\nnodes:\n  - name: a\n", "inv.yaml:2: qos.dscp: unknown key (allowed: sl, tclass)"},
  };
  for (const auto& [yaml, expect] : bad) {
    auto r = ParseInventoryYaml(yaml, "inv.yaml");
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(expect)) << yaml;
  }
}

}  // namespace
}  // namespace gdrbench::controller::inventory
