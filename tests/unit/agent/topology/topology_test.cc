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
  // The GPU's only NIC is SYS away: not a rail by proximity, unless named.
  EXPECT_TRUE(topo->rails.empty());
  auto named = DiscoverTopology(FsRoot(kTrees + "two-socket-sys"), {"mlx5_0"});
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->rails.size(), 1u);
  EXPECT_EQ(named->rails[0].nic, "mlx5_0");
}

TEST(DiscoverTopology, EmptyRootIsEmptyWithReasons) {
  auto topo = DiscoverTopology(FsRoot("/nonexistent-gdrbench-root"));
  ASSERT_TRUE(topo.ok());
  EXPECT_TRUE(topo->gpus.empty());
  EXPECT_TRUE(topo->nics.empty());
  EXPECT_FALSE(topo->notes.empty());
}

Topology Shape(int gpus, std::vector<std::string> nics, std::vector<Relation> rel) {
  Topology t;
  for (int g = 0; g < gpus; ++g) t.gpus.push_back(Gpu{g, {}});
  for (auto& n : nics) t.nics.push_back(Nic{n, true, {}});
  t.relations = std::move(rel);
  return t;
}

TEST(AssignRails, TiedNicsAreAllRailsSpreadOverTheGpus) {
  // Two GPUs both PXB to two NICs (a DGX A100 quadrant): both NICs are
  // rails, one suggested for each GPU.
  Topology t = Shape(2, {"a", "b"}, {{0, "a", PathType::kPxb, {}}, {1, "a", PathType::kPxb, {}},
                                      {0, "b", PathType::kPxb, {}}, {1, "b", PathType::kPxb, {}}});
  AssignRails(t);
  ASSERT_EQ(t.rails.size(), 2u);
  EXPECT_EQ(t.rails[0].gpu_index, 0);
  EXPECT_EQ(t.rails[1].gpu_index, 1);
  EXPECT_TRUE(t.not_rails.empty());
}

TEST(AssignRails, ANicNoGpuIsNearIsNotARailUnlessNamed) {
  // "s" is SYS from the GPU, "r" PIX: only "r" is a rail; naming "s" makes it one.
  Topology t = Shape(1, {"r", "s"}, {{0, "r", PathType::kPix, {}}, {0, "s", PathType::kSys, {}}});
  AssignRails(t);
  ASSERT_EQ(t.rails.size(), 1u);
  EXPECT_EQ(t.rails[0].nic, "r");
  ASSERT_EQ(t.not_rails.size(), 1u);
  EXPECT_EQ(t.not_rails[0].nic, "s");
  EXPECT_EQ(t.not_rails[0].why, "closest GPU0 is SYS");
  EXPECT_FALSE(t.Strict("s"));
  AssignRails(t, {"s"});
  ASSERT_EQ(t.rails.size(), 2u);
  EXPECT_TRUE(t.rails[1].named);
  EXPECT_EQ(t.rails[1].path, PathType::kSys);
  EXPECT_TRUE(t.Strict("s"));
}

TEST(AssignRails, AGpusNearestNicAtNodeIsNotARail) {
  // The GPU's nearest NIC is NODE: no rail (and gpu_nic_topology FAILs it).
  Topology t = Shape(1, {"n"}, {{0, "n", PathType::kNode, {}}});
  AssignRails(t);
  EXPECT_TRUE(t.rails.empty());
  ASSERT_EQ(t.not_rails.size(), 1u);
  EXPECT_EQ(t.not_rails[0].why, "closest GPU0 is NODE");
}

TEST(AssignRails, NoGpuNodeJudgesEveryNicStrictly) {
  Topology t = Shape(0, {"rxe0"}, {});
  t.nics[0].has_pci = false;
  AssignRails(t);
  EXPECT_TRUE(t.rails.empty());
  EXPECT_EQ(t.not_rails.at(0).why, "software RDMA device (no PCI function)");
  EXPECT_TRUE(t.Strict("rxe0"));  // no GPU at all: the sweep tests every NIC
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

namespace gdrbench::agent::topology {
namespace {

// A GPU x NIC matrix as nvidia-smi topo -m prints it, transcribed from the
// published source into tests/testdata/preflight/published/<tree>.topo-m.txt:
// a header row (GPU columns, then NIC columns named mlx5_* or NIC<n>), one
// row per GPU, and the NIC legend when columns are NIC<n>.
struct Published {
  std::vector<std::string> nics;                       // column order, by device name
  std::map<int, std::vector<std::string>> rows;        // GPU -> the cells under `nics`
};

Published ReadPublished(const std::string& tree) {
  Published p;
  std::ifstream in(kTrees + "published/" + tree + ".topo-m.txt");
  EXPECT_TRUE(in) << "missing published matrix for " << tree;
  std::string line;
  std::vector<std::string> header;
  std::map<std::string, std::string> legend;
  std::vector<std::string> raw_rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> tok = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (tok.empty()) continue;
    if (header.empty() && tok[0] == "GPU0") {
      header = tok;
    } else if (tok[0].rfind("GPU", 0) == 0) {
      raw_rows.push_back(line);
    } else if (tok.size() == 2 && tok[0].rfind("NIC", 0) == 0 && tok[0].back() == ':') {
      legend[tok[0].substr(0, tok[0].size() - 1)] = tok[1];
    }
  }
  size_t gpus = 0;
  while (gpus < header.size() && header[gpus].rfind("GPU", 0) == 0) ++gpus;
  size_t first_nic = gpus;
  for (size_t j = gpus; j < header.size(); ++j) {
    const std::string& h = header[j];
    if (h.rfind("mlx5_", 0) != 0 && h.rfind("NIC", 0) != 0) break;
    p.nics.push_back(legend.count(h) ? legend[h] : h);
  }
  for (const auto& l : raw_rows) {
    std::vector<std::string> tok = absl::StrSplit(l, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    int g = std::stoi(tok[0].substr(3));
    // tok[0] is the row name; cells follow in header order.
    p.rows[g].assign(tok.begin() + 1 + first_nic, tok.begin() + 1 + first_nic + p.nics.size());
  }
  return p;
}

void ExpectMatchesPublished(const std::string& tree, size_t gpus, size_t nics) {
  SCOPED_TRACE(tree);
  auto topo = DiscoverTopology(FsRoot(kTrees + tree));
  ASSERT_TRUE(topo.ok()) << topo.status();
  Published p = ReadPublished(tree);
  ASSERT_EQ(topo->gpus.size(), gpus);
  ASSERT_EQ(p.rows.size(), gpus);
  ASSERT_EQ(p.nics.size(), nics);
  ASSERT_EQ(topo->nics.size(), nics);
  int cells = 0;
  for (const auto& [g, row] : p.rows) {
    for (size_t j = 0; j < p.nics.size(); ++j) {
      const Relation* r = topo->Find(g, p.nics[j]);
      ASSERT_NE(r, nullptr) << "GPU" << g << " x " << p.nics[j];
      EXPECT_EQ(PathTypeName(r->path), row[j]) << "GPU" << g << " x " << p.nics[j];
      ++cells;
    }
  }
  EXPECT_EQ(cells, static_cast<int>(gpus * nics));
}

std::vector<std::string> Names(const std::vector<Rail>& rails) {
  std::vector<std::string> out;
  for (const auto& r : rails) out.push_back(r.nic);
  return out;
}
std::vector<std::string> Names(const std::vector<NotRail>& others) {
  std::vector<std::string> out;
  for (const auto& r : others) out.push_back(r.nic);
  return out;
}

// DGX A100 (rapidsai/ucx-py#749): 96 cells; the storage HCAs are SYS to
// every GPU and are not rails.
TEST(PublishedServers, DgxA100MatchesItsMatrixAndItsStorageNicsAreNotRails) {
  ExpectMatchesPublished("dgx-a100", 8, 12);
  auto topo = DiscoverTopology(FsRoot(kTrees + "dgx-a100"));
  ASSERT_TRUE(topo.ok());
  EXPECT_THAT(Names(topo->rails), testing::ElementsAre("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3",
                                                       "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"));
  EXPECT_THAT(Names(topo->not_rails), testing::ElementsAre("mlx5_10", "mlx5_11", "mlx5_4", "mlx5_5"));
  // Tied NICs spread over the GPU pair: mlx5_0 -> GPU0, mlx5_1 -> GPU1.
  EXPECT_EQ(topo->RailOf("mlx5_0")->gpu_index, 0);
  EXPECT_EQ(topo->RailOf("mlx5_1")->gpu_index, 1);
  EXPECT_EQ(topo->RailOf("mlx5_9")->gpu_index, 7);
  EXPECT_EQ(topo->gpus[0].pci.bdf, "0000:07:00.0");
}

// 8x H200 with an in-band RoCE bond (weiziyang.wiki): 72 cells; the bond is
// NODE to GPU0-3 and not a rail.
TEST(PublishedServers, H200InbandBondMatchesItsMatrixAndTheBondIsNotARail) {
  ExpectMatchesPublished("h200-inband-bond", 8, 9);
  auto topo = DiscoverTopology(FsRoot(kTrees + "h200-inband-bond"));
  ASSERT_TRUE(topo.ok());
  EXPECT_EQ(topo->rails.size(), 8u);
  ASSERT_EQ(topo->not_rails.size(), 1u);
  EXPECT_EQ(topo->not_rails[0].nic, "mlx5_bond_0");
  EXPECT_EQ(topo->not_rails[0].why, "closest GPU0 is NODE");
}

// 8x H200 with ConnectX-6 Dx Ethernet cards on GPU0's and GPU4's switches
// (kvcache-ai/Mooncake#2039): 96 cells. The Ethernet ports tie with the
// ConnectX-7 as those GPUs' nearest NICs, so by the rule they are rails
// too; an agent owning only the InfiniBand HCAs (--devices) leaves them out.
TEST(PublishedServers, H200EthernetStorageMatchesItsMatrixTiesKeepAll) {
  ExpectMatchesPublished("h200-ethernet-storage", 8, 12);
  auto topo = DiscoverTopology(FsRoot(kTrees + "h200-ethernet-storage"));
  ASSERT_TRUE(topo.ok());
  EXPECT_EQ(topo->rails.size(), 12u);
  EXPECT_TRUE(topo->not_rails.empty());
  auto nearest = topo->Nearest(0);
  ASSERT_EQ(nearest.size(), 3u);
  EXPECT_EQ(nearest[0]->nic, "mlx5_0");
  EXPECT_EQ(nearest[2]->nic, "mlx5_2");
}

}  // namespace
}  // namespace gdrbench::agent::topology
