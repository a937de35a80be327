#include "controller/cli/node_info_table.h"

#include "absl/strings/str_join.h"
#include "controller/run/port_state.h"
#include "fmt/format.h"

namespace gdrbench::controller::cli {
namespace {

std::string OrNone(const std::string& s, const char* none = "not found") {
  return s.empty() ? none : s;
}

}  // namespace

std::string FormatNodeInfo(const v1::NodeInfo& info) {
  const auto& sw = info.software();
  std::string out;
  out += fmt::format("Node {}\n", info.hostname());
  out += fmt::format("  kernel          {}\n", OrNone(sw.kernel()));
  out += fmt::format("  agent           {}\n", sw.agent());
  out += fmt::format("  NVIDIA driver   {}\n", OrNone(sw.nvidia_driver(), "not loaded"));
  out += fmt::format("  CUDA driver     {}\n", OrNone(sw.cuda_driver(), "not available"));
  out += fmt::format("  rdma-core       {}\n", OrNone(sw.rdma_core()));
  if (!sw.ofed().empty()) out += fmt::format("  OFED            {}\n", sw.ofed());

  out += "\nGPUs\n";
  if (info.gpus().empty()) {
    out += fmt::format("  none: {}\n", info.gpus_absent_reason());
  } else {
    out += fmt::format("  {:<3} {:<14} {:<5} {:>9}  {:<18} {}\n", "#", "PCI", "NUMA", "memory",
                       "compute mode", "name / UUID");
    for (const auto& g : info.gpus()) {
      out += fmt::format("  {:<3} {:<14} {:<5} {:>6.1f} GiB  {:<18} {} {}\n", g.index(),
                         g.pci_bdf(), g.numa_node(),
                         static_cast<double>(g.memory_total_bytes()) / (1ull << 30),
                         g.compute_mode(), g.name(), g.uuid());
    }
  }

  out += "\nRDMA devices\n";
  if (info.nics().empty()) {
    out += fmt::format("  none: {}\n", info.nics_absent_reason());
  } else {
    out += fmt::format("  {:<10} {:<4} {:<12} {:<10} {:>9} {:>6}  {:<10} {:<14} {}\n", "device",
                       "port", "state", "link", "rate", "MTU", "netdev", "PCI", "addresses");
    for (const auto& n : info.nics()) {
      for (const auto& p : n.ports()) {
        out += fmt::format("  {:<10} {:<4} {:<12} {:<10} {:>6.0f} Gb/s {:>5}  {:<10} {:<14} {}\n", n.device(),
                           p.port_num(), run::PortStateText(p), p.link_layer(), p.active_rate_gbps(),
                           p.active_mtu_bytes(), OrNone(p.netdev(), "-"), OrNone(n.pci_bdf(), "-"),
                           absl::StrJoin(p.ip_addresses(), " "));
        for (const auto& g : p.gids()) {
          out += fmt::format("  {:<10} {:<4}   GID {:<3} {} {}\n", "", "", g.index(), g.gid(),
                             g.type());
        }
      }
    }
  }
  if (!info.relations().empty()) {
    out += "\nGPU x NIC\n";
    for (const auto& r : info.relations()) {
      out += fmt::format("  GPU{} - {}: {}\n", r.gpu_index(), r.nic_device(),
                         v1::PathType_Name(r.path()).substr(10));
    }
  }
  return out;
}

}  // namespace gdrbench::controller::cli
