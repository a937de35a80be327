// `dns:NAME[:PORT]` discovery through a fake resolver. The records are what a
// headless Service answers: one A (IPv4) or AAAA (IPv6) record per ready
// endpoint, the name <service>.<namespace>.svc.<zone> (Kubernetes DNS-Based
// Service Discovery specification, kubernetes/dns docs/specification.md,
// section 2.4 "Records for a Headless Service"); a dual-stack Service has both
// an A and an AAAA record for each pod.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "controller/inventory/inventory.h"
#include "controller/inventory/resolver.h"

namespace gdrbench::controller::inventory {
namespace {

using ::testing::HasSubstr;

class FakeResolver final : public Resolver {
 public:
  std::map<std::string, absl::StatusOr<std::vector<std::string>>> answers;
  mutable std::vector<std::string> asked;
  absl::StatusOr<std::vector<std::string>> Resolve(absl::string_view name) const override {
    asked.emplace_back(name);
    auto it = answers.find(std::string(name));
    if (it == answers.end()) return absl::NotFoundError("'" + std::string(name) + "' has no address");
    return it->second;
  }
};

constexpr char kService[] = "gdrbench-agent.gdrbench.svc.cluster.local";

FakeResolver Cluster() {
  FakeResolver r;
  r.answers[kService] = std::vector<std::string>{"10.244.1.7", "10.244.2.9", "fd00:10:244::7"};
  r.answers["agents.example.org"] = std::vector<std::string>{"192.0.2.10", "192.0.2.11"};
  return r;
}

TEST(DnsInventory, EveryRecordIsANodeNamedByItsAddressUntilItsAgentAnswers) {
  FakeResolver r = Cluster();
  auto inv = InventoryFromAgents(std::string("dns:") + kService, 7070, r);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 3u);
  EXPECT_EQ(inv->nodes[0].address, "10.244.1.7:7070");
  EXPECT_EQ(inv->nodes[0].name, "10.244.1.7");
  EXPECT_EQ(inv->nodes[2].address, "[fd00:10:244::7]:7070");
  for (const auto& n : inv->nodes) EXPECT_TRUE(n.name_from_agent) << n.name;
  EXPECT_EQ(r.asked, std::vector<std::string>{kService});
}

TEST(DnsInventory, PortAfterTheNameAndMixedWithPlainEntries) {
  FakeResolver r = Cluster();
  auto inv = InventoryFromAgents("dns:agents.example.org:7000,node9:7001,dns:agents.example.org:7000",
                                 7070, r);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 3u);  // the repeated name adds no node
  EXPECT_EQ(inv->nodes[0].address, "192.0.2.10:7000");
  EXPECT_EQ(inv->nodes[1].address, "192.0.2.11:7000");
  EXPECT_EQ(inv->nodes[2].name, "node9");
  EXPECT_FALSE(inv->nodes[2].name_from_agent);
}

TEST(DnsInventory, ANameWithoutAddressesIsOneErrorNamingIt) {
  FakeResolver r = Cluster();
  auto inv = InventoryFromAgents("dns:missing.gdrbench.svc", 7070, r);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(inv.status().message(), HasSubstr("--agents: dns:missing.gdrbench.svc: "));
  r.answers["flaky"] = absl::UnavailableError("resolving 'flaky' failed temporarily");
  EXPECT_EQ(InventoryFromAgents("dns:flaky", 7070, r).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(DnsInventory, BadPortIsInvalidArgument) {
  FakeResolver r = Cluster();
  auto inv = InventoryFromAgents("dns:agents.example.org:99999", 7070, r);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(inv.status().message(), HasSubstr("99999"));
  EXPECT_TRUE(r.asked.empty());
}

TEST(DnsInventory, HostlistFlagDoesNotResolve) {
  FakeResolver r = Cluster();
  EXPECT_FALSE(InventoryFromHostlist("dns:agents.example.org", 7070).ok());
}

TEST(DnsInventory, InventoryFileEntryKeepsRailsPortAndLine) {
  FakeResolver r = Cluster();
  auto inv = ParseInventoryYaml(R"(port: 7100
link_gbps: 400
nodes:
  - name: login1
  - dns: agents.example.org
    rails: [{nic: mlx5_0, gpu: 0}]
)", "inv.yaml", r);
  ASSERT_TRUE(inv.ok()) << inv.status();
  ASSERT_EQ(inv->nodes.size(), 3u);
  EXPECT_EQ(inv->nodes[1].address, "192.0.2.10:7100");
  EXPECT_EQ(inv->nodes[2].address, "192.0.2.11:7100");
  EXPECT_EQ(inv->nodes[2].line, 5);
  ASSERT_EQ(inv->nodes[2].rails.size(), 1u);
  EXPECT_EQ(inv->nodes[2].rails[0].nic, "mlx5_0");
  EXPECT_EQ(inv->nodes[2].link_gbps, 400);
  EXPECT_TRUE(inv->nodes[2].name_from_agent);
}

TEST(DnsInventory, InventoryFileErrorsNameTheLine) {
  FakeResolver r = Cluster();
  auto missing = ParseInventoryYaml("nodes:\n  - name: a\n  - dns: nowhere.invalid\n", "inv.yaml", r);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("inv.yaml:3: nodes[1].dns: dns:nowhere.invalid"));
  auto both = ParseInventoryYaml("nodes:\n  - dns: agents.example.org\n    hostlist: n[1-2]\n",
                                 "inv.yaml", r);
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(), HasSubstr("give one of hostlist, dns or name/address"));
}

TEST(SystemResolver, ResolvesLocalhostAndRefusesAnInvalidName) {
  // /etc/hosts always names localhost; .invalid never resolves (RFC 6761 6.4).
  SystemResolver r;
  auto local = r.Resolve("localhost");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_THAT(*local, ::testing::Contains(::testing::AnyOf("127.0.0.1", "::1")));
  auto none = r.Resolve("no-such-agent.invalid");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no-such-agent.invalid"));
}

}  // namespace
}  // namespace gdrbench::controller::inventory
