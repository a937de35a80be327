#include "controller/inventory/inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::inventory {
namespace {

using ::testing::HasSubstr;

constexpr char kGood[] = R"(port: 7000
link_gbps: 400
memory: gpu
tls:
  ca: /etc/gdrbench/ca.pem
  cert: /etc/gdrbench/c.pem
  key: /etc/gdrbench/c.key
rails:
  - {nic: mlx5_0, gpu: 0}
  - {nic: mlx5_1, gpu: 1}
nodes:
  - name: a
    address: 10.0.0.1:50051
  - name: b
    rails: [{nic: mlx5_2, gpu: 3}]
    link_gbps: 200
  - hostlist: c[1-2]
)";

TEST(Inventory, ParsesNodesRailsTlsAndHostlists) {
  auto inv = ParseInventoryYaml(kGood, "inv.yaml");
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 4u);
  EXPECT_EQ(inv->nodes[0].address, "10.0.0.1:50051");
  EXPECT_EQ(inv->nodes[0].rails.size(), 2u);
  EXPECT_EQ(inv->nodes[0].link_gbps, 400);
  EXPECT_EQ(inv->nodes[1].address, "b:7000");
  ASSERT_EQ(inv->nodes[1].rails.size(), 1u);
  EXPECT_EQ(inv->nodes[1].rails[0].nic, "mlx5_2");
  EXPECT_EQ(*inv->nodes[1].rails[0].gpu, 3u);
  EXPECT_EQ(inv->nodes[1].link_gbps, 200);
  EXPECT_EQ(inv->nodes[3].name, "c2");
  EXPECT_EQ(inv->nodes[3].address, "c2:7000");
  EXPECT_EQ(inv->nodes[3].line, 17);
  EXPECT_TRUE(inv->has_tls);
  EXPECT_EQ(inv->tls.ca_file, "/etc/gdrbench/ca.pem");
  EXPECT_EQ(inv->memory, "gpu");
  EXPECT_EQ(MaxRails(*inv), 2u);
}

struct BadCase {
  const char* yaml;
  const char* expect;  // substring of the error
};

TEST(Inventory, ErrorsNameTheLineAndTheField) {
  const BadCase cases[] = {
      {"nodes:\n  - name: a\n    rails:\n      - {nic: m, gpu: x}\n",
       "inv.yaml:4: nodes[0].rails[0].gpu: expected an integer"},
      {"nodes:\n  - name: a\n  - name: a\n", "inv.yaml:3: nodes: node 'a' is listed twice"},
      {"nodes:\n  - nam: a\n", "inv.yaml:2: nodes[0].nam: unknown key"},
      {"port: 0\nnodes:\n  - name: a\n", "inv.yaml:1: port: must be in 1..65535"},
      {"nodes: []\n", "inv.yaml:1: nodes: expected a non-empty list"},
      {"port: 1\n", "inv.yaml: nodes: missing"},
      {"nodes:\n  - name: a\n    address: a:99999\n", "inv.yaml:3: nodes[0].address:"},
      {"nodes:\n  - hostlist: n[3-1]\n", "inv.yaml:2: nodes[0].hostlist: hostlist"},
      {"link_gbps: fast\nnodes:\n  - name: a\n", "inv.yaml:1: link_gbps: expected a rate"},
      {"memory: gddr\nnodes:\n  - name: a\n", "inv.yaml:1: memory: expected host"},
      {"nodes:\n  - name: [a\n", "inv.yaml:"},
      {"tls:\n  cert: x\nnodes:\n  - name: a\n", "inv.yaml:2: tls: cert and key"},
  };
  for (const auto& c : cases) {
    auto inv = ParseInventoryYaml(c.yaml, "inv.yaml");
    ASSERT_FALSE(inv.ok()) << c.yaml;
    EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(c.expect)) << c.yaml;
  }
}

// A wrong guess at the schema is answered with the keys that are accepted
// there (the issue's "nodes[0]: expected a mapping" said nothing more).
TEST(Inventory, ErrorsNameTheAcceptedKeys) {
  const BadCase cases[] = {
      {"nodes:\n  - node01\n",
       "inv.yaml:2: nodes[0]: expected a mapping with keys address, dns, hostlist, leaf, link_gbps, name, "
       "rails, spine_group, got 'node01'"},
      {"- name: a\n",
       "inv.yaml:1: inventory: expected a mapping with keys expect, link_gbps, memory, nodes, port, qos, "
       "rails, tls, got a list"},
      {"tls: on\nnodes:\n  - name: a\n",
       "inv.yaml:1: tls: expected a mapping with keys ca, cert, insecure, key, server_name, got 'on'"},
      {"rails: [mlx5_0]\nnodes:\n  - name: a\n",
       "inv.yaml:1: rails[0]: expected a mapping with keys gpu, nic, got 'mlx5_0'"},
      {"nodes:\n  - name: a\n    gpus: 8\n",
       "inv.yaml:3: nodes[0].gpus: unknown key (allowed: address, dns, hostlist, leaf, link_gbps, name, rails, spine_group)"},
  };
  for (const auto& c : cases) {
    auto inv = ParseInventoryYaml(c.yaml, "inv.yaml");
    ASSERT_FALSE(inv.ok()) << c.yaml;
    EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(c.expect)) << c.yaml;
  }
}

TEST(Inventory, ExpectationsOfTheFleet) {
  auto inv = ParseInventoryYaml(
      "expect:\n  gpus: 8\n  rails: 8\n  link_gbps: 400\n  link_state: PORT_ACTIVE\n"
      "  nvidia_driver: \"580\"\n  cuda_driver: \"13.0\"\n  rdma_core: \"44\"\n  ofed: 24.10-1.1.4.0\n"
      "  hca_firmware: 28.39.1002\n  min_mtu: 4096\nnodes:\n  - name: a\n",
      "inv.yaml");
  ASSERT_TRUE(inv.ok()) << inv.status();
  const Expectations& e = inv->expect;
  EXPECT_EQ(*e.gpus, 8u);
  EXPECT_EQ(*e.rails, 8u);
  EXPECT_EQ(*e.link_gbps, 400);
  EXPECT_EQ(e.link_state, "PORT_ACTIVE");
  EXPECT_EQ(e.nvidia_driver, "580");
  EXPECT_EQ(e.cuda_driver, "13.0");
  EXPECT_EQ(e.rdma_core, "44");
  EXPECT_EQ(e.ofed, "24.10-1.1.4.0");
  EXPECT_EQ(e.hca_firmware, "28.39.1002");
  EXPECT_EQ(e.min_mtu_bytes, 4096u);
  EXPECT_TRUE(e.controller_checks());
  // A whole number keeps its text in every reader: accepted unquoted.
  auto whole = ParseInventoryYaml("expect:\n  nvidia_driver: 580\n  rdma_core: '50.0'\nnodes:\n  - name: a\n",
                                  "inv.yaml");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->expect.nvidia_driver, "580");
  EXPECT_EQ(whole->expect.rdma_core, "50.0");
  auto none = ParseInventoryYaml("nodes:\n  - name: a\n", "inv.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->expect.controller_checks());
  const BadCase bad[] = {
      {"expect:\n  gpu: 8\nnodes:\n  - name: a\n", "inv.yaml:2: expect.gpu: unknown key (allowed: cuda_driver, gpus,"},
      {"expect:\n  link_state: ACTIVE\nnodes:\n  - name: a\n",
       "inv.yaml:2: expect.link_state: expected a port state as ibv_devinfo prints it"},
      {"expect:\n  gpus: eight\nnodes:\n  - name: a\n", "inv.yaml:2: expect.gpus: expected an integer"},
      // Versions YAML reads as numbers (YAML 1.2.2, 10.3.2: the core schema's float and
      // integer forms): refused with the quoting hint, whatever this parser keeps.
      {"expect:\n  cuda_driver: 13.0\nnodes:\n  - name: a\n",
       "inv.yaml:2: expect.cuda_driver: unquoted 13.0 is a number in YAML, not a version (13.10 reads as "
       "13.1, 13.0 as 13): quote it, cuda_driver: \"13.0\""},
      {"expect:\n  hca_firmware: 28.39\nnodes:\n  - name: a\n", "expect.hca_firmware: unquoted 28.39 is a number"},
      {"expect:\n  nvidia_driver: 0580\nnodes:\n  - name: a\n", "expect.nvidia_driver: unquoted 0580 is a number"},
      {"expect:\n  rdma_core: 1e3\nnodes:\n  - name: a\n", "expect.rdma_core: unquoted 1e3 is a number"},
  };
  for (const auto& c : bad) {
    auto r = ParseInventoryYaml(c.yaml, "inv.yaml");
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expect)) << c.yaml;
  }
}

TEST(Inventory, MissingFileNamesThePath) {
  auto inv = LoadInventoryFile("/nonexistent/inv.yaml");
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr("/nonexistent/inv.yaml"));
}

TEST(Inventory, AgentsListTakesPortsAndHostlists) {
  auto inv = InventoryFromAgents("10.0.0.1:7001,node[1-2]:7002,solo,[::1]:7003", 50051);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 5u);
  EXPECT_EQ(inv->nodes[0].name, "10.0.0.1");
  EXPECT_EQ(inv->nodes[0].address, "10.0.0.1:7001");
  EXPECT_EQ(inv->nodes[2].address, "node2:7002");
  EXPECT_EQ(inv->nodes[3].address, "solo:50051");
  EXPECT_EQ(inv->nodes[4].address, "[::1]:7003");
}

// Several agents on one host (one per NIC, as in the lab): each node is
// named by its address, so every result stays keyed to its own agent.
TEST(Inventory, AgentsOnOneHostAreNamedByTheirAddress) {
  auto inv = InventoryFromAgents("127.0.0.1:7001,127.0.0.1:7002,solo:7003", 1);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 3u);
  EXPECT_EQ(inv->nodes[0].name, "127.0.0.1:7001");
  EXPECT_EQ(inv->nodes[1].name, "127.0.0.1:7002");
  EXPECT_EQ(inv->nodes[2].name, "solo");
  auto same = InventoryFromAgents("127.0.0.1:7001,127.0.0.1:7001", 1);
  ASSERT_FALSE(same.ok());
  EXPECT_THAT(std::string(same.status().message()), HasSubstr("'127.0.0.1:7001' listed twice"));
}

TEST(Inventory, AgentsListRejectsDuplicatesAndBadPorts) {
  EXPECT_FALSE(InventoryFromAgents("a:1,a:1", 1).ok());
  // Several agents per host on different ports are nodes of their own
  // (issue 12, item 14; inventory_keys_test.cc).
  EXPECT_TRUE(InventoryFromAgents("a:1,a:2", 1).ok());
  EXPECT_FALSE(InventoryFromAgents("a:0", 1).ok());
  EXPECT_FALSE(InventoryFromAgents("", 1).ok());
  auto h = InventoryFromHostlist("node[01-16]:9000", 1);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->nodes.size(), 16u);
  EXPECT_EQ(h->nodes[15].address, "node16:9000");
}

}  // namespace
}  // namespace gdrbench::controller::inventory

namespace gdrbench::controller::inventory {
namespace {

// Rail-optimised fabrics (NVIDIA's DGX SuperPOD reference architecture):
// rail r of every node of a scalable unit goes to that unit's leaf r.
TEST(Inventory, LeafLabelsPerRailFromATemplateOrAList) {
  auto inv = ParseInventoryYaml(R"(rails:
  - {nic: mlx5_0, gpu: 0}
  - {nic: mlx5_1, gpu: 1}
nodes:
  - hostlist: su1-n[01-02]
    leaf: su1-leaf{rail}
    spine_group: plane{rail}
  - name: odd
    leaf: [tor-7a, tor-7b]
  - name: bare
)", "inv.yaml");
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->nodes[1].leaf.Of(0), "su1-leaf0");
  EXPECT_EQ(inv->nodes[1].leaf.Of(1), "su1-leaf1");
  EXPECT_EQ(inv->nodes[1].spine_group.Of(1), "plane1");
  EXPECT_EQ(inv->nodes[2].leaf.Of(1), "tor-7b");
  EXPECT_EQ(inv->nodes[2].leaf.Of(2), "");
  EXPECT_EQ(inv->nodes[2].spine_group.Of(0), "");
  EXPECT_TRUE(inv->nodes[3].leaf.empty());
  EXPECT_EQ(inv->nodes[3].leaf.Of(0), "");
}

TEST(Inventory, LeafLabelErrorsNameTheLine) {
  const BadCase cases[] = {
      {"rails:\n  - {nic: a}\n  - {nic: b}\nnodes:\n  - name: a\n    leaf: [x]\n",
       "inv.yaml:6: nodes[0].leaf: 1 leaves for 2 rails"},
      {"nodes:\n  - name: a\n    leaf: {x: 1}\n", "inv.yaml:3: nodes[0].leaf: expected a name or a list"},
      {"nodes:\n  - name: a\n    leaf: []\n", "inv.yaml:3: nodes[0].leaf: expected a name or a non-empty list"},
      {"nodes:\n  - name: a\n    spine_group: s\n", "inv.yaml:3: nodes[0].spine_group: needs leaf:"},
  };
  for (const auto& c : cases) {
    auto inv = ParseInventoryYaml(c.yaml, "inv.yaml");
    ASSERT_FALSE(inv.ok()) << c.yaml;
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(c.expect)) << c.yaml;
  }
}

}  // namespace
}  // namespace gdrbench::controller::inventory
