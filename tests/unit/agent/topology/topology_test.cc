#include "agent/topology/topology.h"

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::topology {
namespace {

const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/";

PciDevice Dev(std::string rc, std::vector<std::string> ancestors, std::string bdf, int numa = 0) {
  PciDevice d;
  d.root_complex = std::move(rc);
  d.ancestors = std::move(ancestors);
  d.bdf = std::move(bdf);
  d.numa_node = numa;
  return d;
}

TEST(Classify, SameSwitchIsPix) {
  // root port -> switch upstream -> two downstream ports -> GPU / NIC
  auto gpu = Dev("pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, "0000:03:00.0");
  auto nic = Dev("pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, "0000:04:00.0");
  std::vector<std::string> bridges;
  EXPECT_EQ(Classify(gpu, nic, &bridges), PathType::kPix);
  EXPECT_THAT(bridges, testing::ElementsAre("0000:02:00.0", "0000:01:00.0", "0000:02:01.0"));
}

TEST(Classify, TwoSwitchLevelsIsPxb) {
  // GPU behind a second switch hanging off the first switch's downstream port.
  auto gpu = Dev("pci0000:00",
                 {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"},
                 "0000:05:00.0");
  auto nic = Dev("pci0000:00", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, "0000:06:00.0");
  EXPECT_EQ(Classify(gpu, nic, nullptr), PathType::kPxb);
}

TEST(Classify, DifferentRootPortsIsPhb) {
  auto gpu = Dev("pci0000:00", {"0000:00:01.0"}, "0000:01:00.0");
  auto nic = Dev("pci0000:00", {"0000:00:02.0"}, "0000:02:00.0");
  EXPECT_EQ(Classify(gpu, nic, nullptr), PathType::kPhb);
  // Devices on the root bus itself (virtual machines): also the host bridge.
  EXPECT_EQ(Classify(Dev("pci0000:00", {}, "0000:00:03.0"), Dev("pci0000:00", {}, "0000:00:04.0"),
                     nullptr),
            PathType::kPhb);
}

TEST(Classify, HostBridgesOfOneNumaNodeIsNodeAcrossNodesIsSys) {
  auto gpu = Dev("pci0000:15", {"0000:15:01.0"}, "0000:16:00.0", 0);
  auto nic_same = Dev("pci0000:3d", {"0000:3d:01.0"}, "0000:3e:00.0", 0);
  auto nic_other = Dev("pci0000:97", {"0000:97:01.0"}, "0000:98:00.0", 1);
  EXPECT_EQ(Classify(gpu, nic_same, nullptr), PathType::kNode);
  EXPECT_EQ(Classify(gpu, nic_other, nullptr), PathType::kSys);
  // A platform without NUMA information is one node.
  nic_other.numa_node = -1;
  EXPECT_EQ(Classify(gpu, nic_other, nullptr), PathType::kNode);
}

TEST(ParseLinkSpeed, KernelFormats) {
  EXPECT_DOUBLE_EQ(ParseLinkSpeed("16.0 GT/s PCIe"), 16.0);
  EXPECT_DOUBLE_EQ(ParseLinkSpeed("8 GT/s"), 8.0);
  EXPECT_DOUBLE_EQ(ParseLinkSpeed("2.5 GT/s PCIe"), 2.5);
  EXPECT_DOUBLE_EQ(ParseLinkSpeed("Unknown"), 0);
  EXPECT_DOUBLE_EQ(ParseLinkSpeed(""), 0);
}

TEST(IsBdf, Shapes) {
  EXPECT_TRUE(IsBdf("0000:18:00.0"));
  EXPECT_FALSE(IsBdf("pci0000:00"));
  EXPECT_FALSE(IsBdf("0000:18:00"));
  EXPECT_FALSE(IsBdf("virtio0"));
}

// The published DGX H100 layout, classified cell for cell against the
// published nvidia-smi topo -m matrix (tests/testdata/preflight/README.md).
TEST(DiscoverTopology, DgxH100MatchesPublishedMatrix) {
  auto topo = DiscoverTopology(FsRoot(kTrees + "dgx-h100"));
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->gpus.size(), 8u);
  ASSERT_EQ(topo->nics.size(), 8u);
  std::ifstream in(kTrees + "dgx-h100.expected_topo");
  ASSERT_TRUE(in) << "missing expected matrix";
  std::string line;
  std::vector<std::string> nic_order;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      auto colon = line.find("order: ");
      std::string names = line.substr(colon + 7);
      names = names.substr(0, names.find(')'));
      nic_order = absl::StrSplit(names, ' ');
      continue;
    }
    std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (cells.empty()) continue;
    ASSERT_EQ(cells.size(), nic_order.size() + 1);
    int g = std::stoi(cells[0].substr(3));
    for (size_t j = 0; j < nic_order.size(); ++j) {
      const Relation* r = topo->Find(g, nic_order[j]);
      ASSERT_NE(r, nullptr) << "GPU" << g << " x " << nic_order[j];
      EXPECT_EQ(PathTypeName(r->path), cells[j + 1]) << "GPU" << g << " x " << nic_order[j];
    }
    ++rows;
  }
  EXPECT_EQ(rows, 8);
  // Rails: each NIC gets the GPU behind its own switch (the User Guide's table).
  std::map<std::string, int> rail;
  for (const auto& r : topo->rails) {
    EXPECT_EQ(r.path, PathType::kPix) << r.nic;
    rail[r.nic] = r.gpu_index;
  }
  EXPECT_EQ(rail["mlx5_0"], 0);
  EXPECT_EQ(rail["mlx5_3"], 1);
  EXPECT_EQ(rail["mlx5_4"], 2);
  EXPECT_EQ(rail["mlx5_5"], 3);
  EXPECT_EQ(rail["mlx5_6"], 4);
  EXPECT_EQ(rail["mlx5_9"], 5);
  EXPECT_EQ(rail["mlx5_10"], 6);
  EXPECT_EQ(rail["mlx5_11"], 7);
  // GPUs in PCI bus order with their NUMA nodes and links.
  EXPECT_EQ(topo->gpus[0].pci.bdf, "0000:1b:00.0");
  EXPECT_EQ(topo->gpus[7].pci.bdf, "0000:df:00.0");
  EXPECT_EQ(topo->gpus[7].pci.numa_node, 1);
  EXPECT_DOUBLE_EQ(topo->gpus[0].pci.link.max_gts, 32.0);
  EXPECT_EQ(topo->gpus[0].pci.link.max_width, 16);
  std::string matrix = FormatMatrix(*topo);
  EXPECT_THAT(matrix, testing::HasSubstr("GPU0  PIX"));
  EXPECT_THAT(matrix, testing::HasSubstr("NIC0: mlx5_0"));
}

TEST(DiscoverTopology, NicOnTheOtherSocketIsSys) {
  auto topo = DiscoverTopology(FsRoot(kTrees + "two-socket-sys"));
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->relations.size(), 1u);
  EXPECT_EQ(topo->relations[0].path, PathType::kSys);
  ASSERT_EQ(topo->rails.size(), 1u);
  EXPECT_EQ(topo->rails[0].nic, "mlx5_0");
}

TEST(DiscoverTopology, EmptyRootIsEmptyWithReasons) {
  auto topo = DiscoverTopology(FsRoot("/nonexistent-gdrbench-root"));
  ASSERT_TRUE(topo.ok());
  EXPECT_TRUE(topo->gpus.empty());
  EXPECT_TRUE(topo->nics.empty());
  EXPECT_FALSE(topo->notes.empty());
}

TEST(ComputeRails, SpreadsEqualCandidatesOverGpus) {
  std::vector<Gpu> gpus(2);
  std::vector<Nic> nics(2);
  nics[0].name = "a";
  nics[1].name = "b";
  std::vector<Relation> rel = {{0, "a", PathType::kPxb, {}}, {1, "a", PathType::kPxb, {}},
                               {0, "b", PathType::kPxb, {}}, {1, "b", PathType::kPxb, {}}};
  auto rails = ComputeRails(gpus, nics, rel);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].gpu_index, 0);
  EXPECT_EQ(rails[1].gpu_index, 1);
}

TEST(ReadAcs, ReadsTheControlRegisterFromExtendedConfig) {
  FsRoot fs(kTrees + "fault-acs");
  auto acs = ReadAcs(fs, "0000:02:00.0");
  ASSERT_TRUE(acs.ok()) << acs.status();
  ASSERT_TRUE(acs->has_value());
  EXPECT_EQ((*acs)->control, 0x001d);
  EXPECT_TRUE((*acs)->redirects_p2p());
  auto healthy = ReadAcs(FsRoot(kTrees + "healthy"), "0000:02:00.0");
  ASSERT_TRUE(healthy.ok());
  ASSERT_TRUE(healthy->has_value());
  EXPECT_FALSE((*healthy)->redirects_p2p());
  EXPECT_EQ(ReadAcs(fs, "0000:03:00.0").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gdrbench::agent::topology
