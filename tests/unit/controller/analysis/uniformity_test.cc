// Fleet uniformity: which versions differ across nodes and who the odd
// nodes out are. Version strings are as the agent reports them (Debian 12's
// kernel and rdma-core packages, NVIDIA driver releases, ConnectX-7 firmware).
#include "controller/analysis/uniformity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

v1::NodeInfo Node(const std::string& host, const std::string& driver,
                  std::vector<std::string> firmware = {"28.39.1002", "28.39.1002"}) {
  v1::NodeInfo n;
  n.set_hostname(host);
  n.mutable_software()->set_kernel("6.1.0-28-amd64");
  n.mutable_software()->set_nvidia_driver(driver);
  n.mutable_software()->set_cuda_driver("13.0");
  n.mutable_software()->set_rdma_core("44.0-2");
  n.mutable_software()->set_agent("0.1.0");
  for (size_t i = 0; i < firmware.size(); ++i) {
    auto* nic = n.add_nics();
    nic->set_device("mlx5_" + std::to_string(i));
    nic->set_firmware_version(firmware[i]);
  }
  return n;
}

const VersionSpread* Find(const std::vector<VersionSpread>& s, const std::string& c) {
  for (const auto& x : s) {
    if (x.component == c) return &x;
  }
  return nullptr;
}

TEST(FleetUniformity, AUniformFleetSaysSoAndLeavesOutWhatNoNodeHas) {
  std::vector<std::string> names = {"a", "b", "c"};
  std::vector<v1::NodeInfo> infos = {Node("a", "580.95.05"), Node("b", "580.95.05"), Node("c", "580.95.05")};
  auto s = FleetUniformity(names, infos);
  for (const auto& x : s) EXPECT_TRUE(x.uniform()) << x.component;
  EXPECT_EQ(Find(s, "OFED"), nullptr);  // no node has MLNX_OFED
  ASSERT_NE(Find(s, "HCA firmware"), nullptr);
  EXPECT_EQ(Find(s, "HCA firmware")->values[0].first, "28.39.1002");
  std::string text = FormatUniformity(s, 3);
  EXPECT_THAT(text, HasSubstr("every component is on one version"));
  EXPECT_THAT(text, HasSubstr("\n  NVIDIA driver   580.95.05 on all 3 nodes\n"));  // aligned to "gdrbench agent"
}

TEST(FleetUniformity, TheNodeOnAnotherDriverIsTheOddOneOut) {
  std::vector<std::string> names = {"a", "b", "c", "d"};
  std::vector<v1::NodeInfo> infos = {Node("a", "580.95.05"), Node("b", "580.95.05"),
                                     Node("c", "580.95.05"), Node("d", "570.133.20")};
  auto s = FleetUniformity(names, infos);
  const VersionSpread* d = Find(s, "NVIDIA driver");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->uniform());
  EXPECT_FALSE(d->split);
  EXPECT_THAT(d->odd_nodes, ElementsAre("d"));
  EXPECT_TRUE(Find(s, "kernel")->uniform());
  std::string text = FormatUniformity(s, 4);
  EXPECT_THAT(text, HasSubstr("1 component(s) differ: upgrade the stack together, in one maintenance window"));
  EXPECT_THAT(text, HasSubstr("580.95.05 on 3 nodes; 570.133.20 on d: odd one(s) out: d"));
}

TEST(FleetUniformity, AbsentIsAValueAndUnreachableNodesAreLeftOut) {
  std::vector<std::string> names = {"a", "b", "c", "down"};
  std::vector<v1::NodeInfo> infos = {Node("a", "580.95.05"), Node("b", "580.95.05"), Node("c", ""),
                                     v1::NodeInfo()};
  auto s = FleetUniformity(names, infos);
  const VersionSpread* d = Find(s, "NVIDIA driver");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(d->odd_nodes, ElementsAre("c"));
  EXPECT_EQ(d->values[1].first, "absent");
  EXPECT_THAT(FormatUniformity(s, 3), Not(HasSubstr("down")));
}

TEST(FleetUniformity, NoMajorityIsASplitAndFirmwareIsPerNic) {
  std::vector<std::string> names = {"a", "b", "c", "d"};
  std::vector<v1::NodeInfo> infos = {Node("a", "580.95.05"), Node("b", "580.95.05"),
                                     Node("c", "570.133.20"), Node("d", "570.133.20", {"28.39.1002", "28.41.1000"})};
  auto s = FleetUniformity(names, infos);
  const VersionSpread* d = Find(s, "NVIDIA driver");
  EXPECT_TRUE(d->split);
  EXPECT_THAT(FormatUniformity(s, 4), HasSubstr("570.133.20 on c, d; 580.95.05 on a, b: no majority"));
  const VersionSpread* fw = Find(s, "HCA firmware");
  EXPECT_THAT(fw->odd_nodes, ElementsAre("d"));
  EXPECT_EQ(HcaFirmware(infos[3]), "28.39.1002, 28.41.1000");
}

}  // namespace
}  // namespace gdrbench::controller::analysis
