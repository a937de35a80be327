// Naming DNS-found nodes by their agents' hostnames, with agents whose
// answers are set per test.
#include "controller/run/discover.h"
#include "tests/unit/controller/run/unimplemented_agent.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;

class InfoAgent final : public UnimplementedAgent {
 public:
  explicit InfoAgent(absl::StatusOr<v1::NodeInfo> info) : info_(std::move(info)) {}
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return info_; }

 private:
  absl::StatusOr<v1::NodeInfo> info_;
};

v1::NodeInfo Info(const std::string& host, const std::string& guid) {
  v1::NodeInfo i;
  i.set_hostname(host);
  i.add_nics()->set_node_guid(guid);
  return i;
}

inventory::Node Found(const std::string& addr) {
  inventory::Node n;
  n.name = addr;
  n.address = addr + ":7070";
  n.name_from_agent = true;
  return n;
}

struct Agents {
  inventory::Inventory inv;
  std::vector<std::unique_ptr<InfoAgent>> owned;
  std::vector<AgentApi*> agents;
  void Add(inventory::Node n, absl::StatusOr<v1::NodeInfo> info) {
    inv.nodes.push_back(std::move(n));
    owned.push_back(std::make_unique<InfoAgent>(std::move(info)));
    agents.push_back(owned.back().get());
  }
};

TEST(NameDiscoveredNodes, HostnamesReplaceAddressesAndDualStackIsOneNode) {
  Agents s;
  s.inv.source = "--agents";
  s.Add(Found("10.244.1.7"), Info("gpu-a01", "0c42:a103:00aa:0001"));
  s.Add(Found("10.244.2.9"), Info("gpu-a02", "0c42:a103:00aa:0002"));
  s.Add(Found("fd00:10:244::7"), Info("gpu-a01", "0c42:a103:00aa:0001"));  // gpu-a01's AAAA
  s.Add(Found("10.244.3.3"), absl::UnavailableError("no connection within 3000 ms"));
  auto kept = NameDiscoveredNodes(&s.inv, s.agents, 2);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, (std::vector<size_t>{0, 1, 3}));
  ASSERT_EQ(s.inv.nodes.size(), 3u);
  EXPECT_EQ(s.inv.nodes[0].name, "gpu-a01");
  EXPECT_EQ(s.inv.nodes[0].address, "10.244.1.7:7070");
  EXPECT_EQ(s.inv.nodes[1].name, "gpu-a02");
  EXPECT_EQ(s.inv.nodes[2].name, "10.244.3.3");  // unreachable: keeps its address
}

// Issue 12, item 16: an agent's hostname with NUL and ESC bytes was echoed
// to the terminal as is.
TEST(NameDiscoveredNodes, ControlBytesInAnAgentsHostnameAreEscaped) {
  Agents s;
  s.inv.source = "--agents";
  s.Add(Found("10.244.1.7"), Info(std::string("evil\0\x1b[2Jname\n", 14), "0c42:a103:00aa:0001"));
  auto kept = NameDiscoveredNodes(&s.inv, s.agents, 1);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(s.inv.nodes[0].name, "evil\\x00\\x1b[2Jname\\x0a");
}

TEST(NameDiscoveredNodes, TwoMachinesWithOneHostnameAreAnError) {
  Agents s;
  s.inv.source = "--agents";
  s.Add(Found("10.244.1.7"), Info("gpu-a01", "0c42:a103:00aa:0001"));
  s.Add(Found("10.244.9.9"), Info("gpu-a01", "0c42:a103:00aa:0099"));
  auto kept = NameDiscoveredNodes(&s.inv, s.agents, 4);
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kept.status().message(), HasSubstr("10.244.1.7:7070 and 10.244.9.9:7070"));
  EXPECT_THAT(kept.status().message(), HasSubstr("'gpu-a01'"));
}

TEST(NameDiscoveredNodes, ListedNodesAreNotAskedAndACollisionWithThemIsAnError) {
  Agents s;
  inventory::Node listed{"gpu-a01", "gpu-a01:7070", {}, 0, 3};
  s.Add(listed, absl::InternalError("must not be asked"));
  s.Add(Found("10.244.1.7"), Info("gpu-a01", "0c42:a103:00aa:0001"));
  auto kept = NameDiscoveredNodes(&s.inv, s.agents, 1);
  ASSERT_FALSE(kept.ok());
  EXPECT_THAT(kept.status().message(), HasSubstr("is listed at gpu-a01:7070 and found by DNS"));
}

}  // namespace
}  // namespace gdrbench::controller::run
