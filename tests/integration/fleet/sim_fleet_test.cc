// The simulated fleet's parts: two members' NICs connect out of band on the
// shared fabric by their own LIDs and move data at their port's rate; a
// stopped member's NICs fail their peers' WRITEs and its port refuses; the
// node info says it is simulated.
#include "tests/integration/fleet/sim_fleet.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/bench/oob_session.h"

namespace gdrbench::testing::fleet {
namespace {

using ::testing::HasSubstr;

const std::string kTree = GDRBENCH_SOURCE_DIR "/tests/testdata/preflight/dgx-h100";

agent::bench::SweepOptions Bw() {
  agent::bench::SweepOptions o;
  o.sizes_bytes = {65536};
  o.iterations = 64;
  o.qps = 1;
  o.tx_depth = 16;
  o.cq_moderation = 1;
  o.seed = 3;
  return o;
}

struct Pair {
  std::unique_ptr<agent::bench::TargetSession> target;
  std::unique_ptr<agent::bench::InitiatorSession> initiator;
};

// Member `from` NIC 0 writes to member `to` NIC 0, connected as the agents
// and the controller connect them.
Pair Connect(SimSessionFactory& from, SimSessionFactory& to, const std::string& nic) {
  Pair p;
  agent::bench::SweepOptions o = Bw();
  auto td = to.ResolveDevice(nic);
  EXPECT_TRUE(td.ok()) << td.status();
  agent::bench::TargetSpec ts{.device = *td,
                              .bind_address = "",
                              .memory = {},
                              .options = o,
                              .slice_bytes = agent::bench::TargetSliceBytes(agent::bench::PlanLayout(o), 0),
                              .cm = agent::bench::CmMode::kAuto};
  auto t = to.OpenTarget(ts);
  EXPECT_TRUE(t.ok()) << t.status();
  p.target = std::move(*t);
  const agent::bench::TargetOpened& op = p.target->opened();
  EXPECT_EQ(op.cm, agent::bench::CmMode::kOob);  // auto: no IPoIB on a member's port
  auto id = from.ResolveDevice(nic);
  agent::bench::InitiatorSpec is{.device = *id,
                                 .bind_address = "",
                                 .memory = {},
                                 .options = o,
                                 .cm = op.cm,
                                 .remote = op.slices,
                                 .target_address = "",
                                 .target_port = 0,
                                 .target = op.oob,
                                 .timeout_ms = 1000};
  auto in = from.OpenInitiator(is);
  EXPECT_TRUE(in.ok()) << in.status();
  p.initiator = std::move(*in);
  EXPECT_TRUE(p.target->Connect(*p.initiator->connect_info()).ok());
  std::atomic<bool> stop{false};
  EXPECT_TRUE(p.target->Accept(stop, 1000).ok());
  EXPECT_TRUE(p.initiator->WaitReady(stop, 1000).ok());
  return p;
}

std::vector<agent::bench::SizeOutcome> Sweep(Pair& p) {
  std::atomic<bool> cancelled{false};
  std::vector<agent::bench::SizeOutcome> out;
  p.initiator->RunSweep(agent::bench::SweepIdentity{"mlx5_0", 1, ""}, cancelled,
                        [&](const agent::bench::SizeOutcome& s) { out.push_back(s); });
  return out;
}

std::vector<agent::verbs::DeviceInfo> Devices(const SharedNode& node, uint32_t member) {
  std::vector<agent::verbs::DeviceInfo> out;
  for (uint32_t n = 0; n < node.devices().size(); ++n) {
    out.push_back(MemberDevice(node.devices()[n], member, n, static_cast<uint32_t>(node.devices().size())));
  }
  return out;
}

TEST(SimSessions, MembersConnectByTheirOwnLidsAtThePortRateAndADeadPeerFailsTheWrites) {
  auto node = SharedNode::Read(kTree);
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_EQ((*node)->devices().size(), 8u);  // the DGX H100's eight ConnectX-7
  agent::bench::testing::FakeFabric fabric;
  SimSessionFactory a(&fabric, Devices(**node, 0)), b(&fabric, Devices(**node, 1));
  EXPECT_EQ(b.ResolveDevice("mlx5_0")->ports.front().lid, 9u);  // 1 + member 1 x 8 NICs + NIC 0
  EXPECT_THAT(std::string(a.ResolveDevice("mlx5_1").status().message()), HasSubstr("present: mlx5_0"));

  Pair p = Connect(a, b, "mlx5_0");
  auto out = Sweep(p);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].ok) << out[0].error;
  EXPECT_LE(out[0].bw_avg_gbps, 400.0);  // the tree's 4X NDR
  EXPECT_GT(out[0].bw_avg_gbps, 300.0);

  // Member 1 dies: its NICs on the fabric are dead, the WRITEs to them fail.
  fabric.KillNics([](uint32_t lid) { return lid >= 9 && lid < 17; });
  out = Sweep(p);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].ok);
}

bool Refused(const std::string& address) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  bool refused = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0;
  close(fd);
  return refused;
}

TEST(SimFleet, MembersServeOnPortsOfTheirOwnSaySimulatedAndAStoppedOneRefuses) {
  FleetConfig c;
  c.members = 3;
  c.fs_root = kTree;
  c.tls.insecure = true;
  auto fleet = SimFleet::Start(c);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  const auto& m = (*fleet)->members();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[2].name, "sim0002");
  EXPECT_NE(m[0].address, m[1].address);
  EXPECT_THAT((*fleet)->InventoryYaml(), HasSubstr("  - {name: sim0001, address: '" + m[1].address + "'}\n"));
  for (const auto& member : m) EXPECT_FALSE(Refused(member.address)) << member.address;
  (*fleet)->Stop(1);
  EXPECT_TRUE((*fleet)->stopped(1));
  EXPECT_TRUE(Refused(m[1].address));
  EXPECT_FALSE(Refused(m[2].address));

  auto node = SharedNode::Read(kTree);
  ASSERT_TRUE(node.ok());
  agent::bench::testing::FakeFabric fabric;
  SimMemberHandler h(*node, 7, "sim0007", &fabric);
  auto info = h.GetNodeInfo({});
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->hostname(), "sim0007");
  EXPECT_THAT(info->software().agent(), HasSubstr("simulated fleet member"));
  ASSERT_EQ(info->nics_size(), 8);
  EXPECT_EQ(info->rails_size(), 8);
  auto report = h.RunPreflight({});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->hostname(), "sim0007");
  EXPECT_EQ(report->overall(), v1::CHECK_STATUS_PASS);
}

TEST(SimFleet, ZeroMembersOrATreeWithoutNicsIsRefused) {
  FleetConfig c;
  c.fs_root = kTree;
  c.tls.insecure = true;
  EXPECT_EQ(SimFleet::Start(c).status().code(), absl::StatusCode::kInvalidArgument);
  c.members = 1;
  c.fs_root = GDRBENCH_SOURCE_DIR "/tests/testdata/preflight/captured-dev-host";
  auto st = SimFleet::Start(c).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("no RDMA device to simulate"));
}

}  // namespace
}  // namespace gdrbench::testing::fleet
