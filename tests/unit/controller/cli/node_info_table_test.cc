#include "controller/cli/node_info_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

TEST(FormatNodeInfo, SaysPlainlyWhatIsAbsent) {
  v1::NodeInfo info;
  info.set_hostname("n1");
  info.set_gpus_absent_reason("no NVIDIA driver: cannot load libcuda.so.1");
  info.set_nics_absent_reason("no RDMA devices: /sys/class/infiniband is absent");
  std::string out = FormatNodeInfo(info);
  EXPECT_THAT(out, HasSubstr("Node n1"));
  EXPECT_THAT(out, HasSubstr("none: no NVIDIA driver"));
  EXPECT_THAT(out, HasSubstr("none: no RDMA devices"));
  EXPECT_THAT(out, HasSubstr("NVIDIA driver   not loaded"));
}

TEST(FormatNodeInfo, ListsPortsGidsGpusAndRelations) {
  v1::NodeInfo info;
  info.set_hostname("n2");
  auto* g = info.add_gpus();
  g->set_index(0);
  g->set_pci_bdf("0000:17:00.0");
  g->set_memory_total_bytes(80ull << 30);
  g->set_name("NVIDIA H100");
  auto* n = info.add_nics();
  n->set_device("mlx5_0");
  auto* p = n->add_ports();
  p->set_port_num(1);
  p->set_port_state(v1::PORT_STATE_ACTIVE);
  p->set_link_layer("InfiniBand");
  p->set_active_rate_gbps(400);
  p->set_active_mtu_bytes(4096);
  auto* gid = p->add_gids();
  gid->set_index(3);
  gid->set_gid("0000:0000:0000:0000:0000:ffff:0a00:0001");
  gid->set_type("RoCE v2");
  auto* r = info.add_relations();
  r->set_gpu_index(0);
  r->set_nic_device("mlx5_0");
  r->set_path(v1::PATH_TYPE_PIX);
  std::string out = FormatNodeInfo(info);
  EXPECT_THAT(out, HasSubstr("80.0 GiB"));
  EXPECT_THAT(out, HasSubstr("PORT_ACTIVE"));
  EXPECT_THAT(out, HasSubstr("400 Gb/s"));
  EXPECT_THAT(out, HasSubstr("GID 3"));
  EXPECT_THAT(out, HasSubstr("RoCE v2"));
  EXPECT_THAT(out, HasSubstr("GPU0 - mlx5_0: PIX"));
}

}  // namespace
}  // namespace gdrbench::controller::cli
