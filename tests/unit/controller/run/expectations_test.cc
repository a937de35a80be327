// The controller's half of the fleet expectations, over GetNodeInfo answers
// shaped like an 8-GPU, 8-rail NDR node (ports as ibv_devinfo names their
// states; 400 Gb/s = 4 lanes x 100 Gb/s).
#include "controller/run/expectations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;

v1::NodeInfo Node(uint32_t gpus, uint32_t nics, double gbps = 400) {
  v1::NodeInfo n;
  n.set_hostname("dgx-a01");
  for (uint32_t g = 0; g < gpus; ++g) n.add_gpus()->set_index(g);
  for (uint32_t i = 0; i < nics; ++i) {
    auto* nic = n.add_nics();
    nic->set_device("mlx5_" + std::to_string(i));
    auto* p = nic->add_ports();
    p->set_port_num(1);
    p->set_port_state(v1::PORT_STATE_ACTIVE);
    p->set_physical_state("LINK_UP");
    p->set_active_rate_gbps(gbps);
  }
  return n;
}

std::vector<inventory::Rail> Rails(uint32_t n) {
  std::vector<inventory::Rail> r;
  for (uint32_t i = 0; i < n; ++i) r.push_back({"mlx5_" + std::to_string(i), i});
  return r;
}

inventory::Expectations Dgx() {
  inventory::Expectations e;
  e.gpus = 8;
  e.rails = 8;
  e.link_gbps = 400;
  e.link_state = "PORT_ACTIVE";
  return e;
}

TEST(Expectations, ANodeAsExpectedPassesAndSaysWhatWasChecked) {
  v1::CheckResult r = CheckExpectations(Dgx(), Node(8, 8), Rails(8));
  EXPECT_EQ(r.id(), "fleet_expectations");
  EXPECT_EQ(r.status(), v1::CHECK_STATUS_PASS);
  EXPECT_THAT(r.summary(), HasSubstr("8 GPUs, 8 rails, links at >= 400 Gb/s, ports PORT_ACTIVE"));
}

TEST(Expectations, EveryMissIsNamedWithARemedy) {
  v1::NodeInfo n = Node(7, 8);
  n.mutable_nics(3)->mutable_ports(0)->set_active_rate_gbps(200);
  n.mutable_nics(5)->mutable_ports(0)->set_port_state(v1::PORT_STATE_DOWN);
  n.mutable_nics(5)->mutable_ports(0)->set_active_rate_gbps(0);
  v1::CheckResult r = CheckExpectations(Dgx(), n, Rails(8));
  EXPECT_EQ(r.status(), v1::CHECK_STATUS_FAIL);
  EXPECT_THAT(r.summary(), HasSubstr("7 GPUs, expected 8"));
  EXPECT_THAT(r.summary(), HasSubstr("rail 3 mlx5_3 at 200 Gb/s, expected at least 400"));
  EXPECT_THAT(r.summary(), HasSubstr("rail 5 mlx5_5 port 1 is PORT_DOWN, expected PORT_ACTIVE"));
  EXPECT_THAT(r.remediation(), HasSubstr("nvidia-smi -L"));
  EXPECT_THAT(r.remediation(), HasSubstr("subnet manager"));
  EXPECT_THAT(r.remediation(), HasSubstr("cable"));
}

TEST(Expectations, ARailCountOrNicThatIsNotThereIsAMiss) {
  v1::CheckResult r = CheckExpectations(Dgx(), Node(8, 7), Rails(8));
  EXPECT_EQ(r.status(), v1::CHECK_STATUS_FAIL);
  EXPECT_THAT(r.summary(), HasSubstr("rail 7 mlx5_7 is absent"));
  v1::CheckResult count = CheckExpectations(Dgx(), Node(8, 7), Rails(7));
  EXPECT_THAT(count.summary(), HasSubstr("7 rails, expected 8"));
}

TEST(Expectations, TheAgentsHalfCarriesVersionsFirmwareAndMtu) {
  inventory::Expectations e;
  e.nvidia_driver = "580";
  e.hca_firmware = "28.39.1002";
  e.min_mtu_bytes = 4096;
  EXPECT_FALSE(e.controller_checks());
  v1::PreflightExpectations p = AgentExpectations(e);
  EXPECT_EQ(p.nvidia_driver(), "580");
  EXPECT_EQ(p.hca_firmware(), "28.39.1002");
  EXPECT_EQ(p.min_mtu_bytes(), 4096u);
  inventory::Expectations flags;
  flags.nvidia_driver = "580.95.05";
  flags.gpus = 4;
  inventory::Expectations merged = inventory::Merge(e, flags);
  EXPECT_EQ(merged.nvidia_driver, "580.95.05");
  EXPECT_EQ(merged.hca_firmware, "28.39.1002");
  EXPECT_EQ(*merged.gpus, 4u);
}

}  // namespace
}  // namespace gdrbench::controller::run
