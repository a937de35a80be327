// The whole checklist on trees rebuilt from published real servers
// (tests/testdata/README.md): healthy ones give no FAIL, their storage and
// in-band NICs are reported as not GPU rails and WARN at most, and single
// faults on them are caught.
#include <map>

#include "agent/preflight/preflight.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing_fakes::Describe;
using testing_fakes::kTrees;
using testing_fakes::Node;
using testing_fakes::TreeCopy;

std::map<std::string, CheckResult> Offline(const std::string& root, RunOptions options = {}) {
  auto report = RunPreflightAt(root.front() == '/' ? root : kTrees + root, options);
  EXPECT_TRUE(report.ok()) << report.status();
  std::map<std::string, CheckResult> by_id;
  if (report.ok()) {
    for (const auto& c : report->checks) by_id[c.id] = c;
  }
  return by_id;
}

void ExpectNoFail(const std::map<std::string, CheckResult>& checks) {
  for (const auto& [id, r] : checks) EXPECT_NE(r.status, Status::kFail) << Describe(r);
}

const std::vector<std::string> kH200IbHcas = {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5",
                                              "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};

TEST(HealthyServers, DgxA100HasNoFailAndNamesItsStorageNics) {
  auto r = Offline("dgx-a100");
  ExpectNoFail(r);
  EXPECT_EQ(r.at("gpu_nic_topology").status, Status::kPass) << Describe(r.at("gpu_nic_topology"));
  EXPECT_THAT(r.at("gpu_nic_topology").summary,
              HasSubstr("8 GPU(s) each share a PCIe switch with their nearest NIC; not GPU rails: "
                        "mlx5_10, mlx5_11, mlx5_4, mlx5_5"));
  // A storage port without an IP address has no RoCE v2 GID: reported, a WARN.
  EXPECT_EQ(r.at("roce_gid").status, Status::kWarn) << Describe(r.at("roce_gid"));
  EXPECT_THAT(r.at("roce_gid").summary, HasSubstr("mlx5_11 port 1 (enp225s0f1) (not a GPU rail: closest GPU"));
  EXPECT_EQ(r.at("rdma_port_active").status, Status::kPass);
  EXPECT_EQ(r.at("pcie_link_degraded").status, Status::kPass) << Describe(r.at("pcie_link_degraded"));
  EXPECT_EQ(r.at("link_error_counters").status, Status::kPass);
}

TEST(HealthyServers, H200WithInbandBondHasNoFail) {
  auto r = Offline("h200-inband-bond");
  ExpectNoFail(r);
  EXPECT_EQ(r.at("gpu_nic_topology").status, Status::kPass);
  EXPECT_THAT(r.at("gpu_nic_topology").summary, HasSubstr("not GPU rails: mlx5_bond_0"));
  // The in-band bond at MTU 1500: below 4096 is a WARN, never a FAIL.
  EXPECT_EQ(r.at("mtu").status, Status::kWarn);
  EXPECT_THAT(r.at("mtu").summary, HasSubstr("mlx5_bond_0 port 1 1024"));
  // Pinned 4096: FAIL only for rails; the bond stays a WARN.
  RunOptions pinned;
  pinned.expect.min_mtu_bytes = 4096;
  auto p = Offline("h200-inband-bond", pinned);
  EXPECT_EQ(p.at("mtu").status, Status::kWarn) << Describe(p.at("mtu"));
  EXPECT_THAT(p.at("mtu").summary, HasSubstr("not a GPU rail"));
}

TEST(HealthyServers, H200WithEthernetCardsHasNoFailForItsInfinibandAgent) {
  RunOptions owned;
  owned.devices = kH200IbHcas;
  auto r = Offline("h200-ethernet-storage", owned);
  ExpectNoFail(r);
  EXPECT_THAT(r.at("stack_version_alignment").summary, HasSubstr("HCA firmware 28.41.1000"));
}

// Without a device list, the disabled Ethernet ports on GPU0's PCIe switch
// tie with its ConnectX-7 as its nearest NICs: rails by the rule, so their
// DOWN state FAILs, and the remedy says how to leave them out.
TEST(HealthyServers, H200WithEthernetCardsTiedDisabledPortsFailNamingTheWayOut) {
  auto r = Offline("h200-ethernet-storage");
  const auto& ports = r.at("rdma_port_active");
  EXPECT_EQ(ports.status, Status::kFail) << Describe(ports);
  EXPECT_THAT(ports.summary, HasSubstr("mlx5_1 port 1 PORT_DOWN/DISABLED"));
  EXPECT_THAT(ports.remediation, HasSubstr("--devices"));
  // Two firmware families (ConnectX-7 28.x, ConnectX-6 Dx 22.x) are no mismatch.
  EXPECT_EQ(r.at("stack_version_alignment").status, Status::kPass) << Describe(r.at("stack_version_alignment"));
}

TEST(ServerFaults, StorageNicInAnX4SlotWarnsARailNicAtX8Fails) {
  auto storage = Offline("dgx-a100-storage-x4").at("pcie_link_degraded");
  EXPECT_EQ(storage.status, Status::kWarn) << Describe(storage);
  EXPECT_THAT(storage.summary, HasSubstr("mlx5_10 (0000:e1:00.0) x4 @ 16 GT/s (max x16 @ 16 GT/s) (not a GPU rail"));
  auto rail = Offline("dgx-a100-rail-x8").at("pcie_link_degraded");
  EXPECT_EQ(rail.status, Status::kFail) << Describe(rail);
  EXPECT_THAT(rail.summary, HasSubstr("mlx5_0 (0000:0c:00.0) x8 @ 16 GT/s (max x16 @ 16 GT/s)"));
  EXPECT_THAT(rail.remediation, HasSubstr("reseat"));
}

TEST(ServerFaults, RailPortDownFailsStoragePortDownWarns) {
  TreeCopy tree("dgx-a100");
  tree.Write("/sys/class/infiniband/mlx5_2/ports/1/state", "1: DOWN\n");
  auto rail = Offline(tree.dir()).at("rdma_port_active");
  EXPECT_EQ(rail.status, Status::kFail) << Describe(rail);
  tree.Write("/sys/class/infiniband/mlx5_2/ports/1/state", "4: ACTIVE\n");
  tree.Write("/sys/class/infiniband/mlx5_4/ports/1/state", "1: DOWN\n");
  auto s = Offline(tree.dir()).at("rdma_port_active");
  EXPECT_EQ(s.status, Status::kWarn) << Describe(s);
  EXPECT_THAT(s.summary, HasSubstr("mlx5_4 port 1 PORT_DOWN/LINK_UP (not a GPU rail"));
}

TEST(ServerFaults, FirmwareDiffersAmongOneModelsRails) {
  TreeCopy tree("dgx-a100");
  tree.Write("/sys/class/infiniband/mlx5_3/fw_ver", "20.28.1002\n");
  auto r = Offline(tree.dir()).at("stack_version_alignment");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("HCA firmware differs within family 20: mlx5_3 20.28.1002; "));
  EXPECT_THAT(r.remediation, HasSubstr("mlxfwmanager"));
}

// The inventory names a storage NIC as a rail: then its faults FAIL.
TEST(ServerFaults, ANicTheInventoryNamesIsJudgedAsARail) {
  RunOptions named;
  named.expect.rail_nics = {"mlx5_11"};
  auto r = Offline("dgx-a100", named).at("roce_gid");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_11 port 1 (enp225s0f1)"));
}

}  // namespace
}  // namespace gdrbench::agent::preflight
