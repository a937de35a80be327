#include "agent/service/node_info.h"

#include <sys/utsname.h>
#include <unistd.h>


#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/cuda/driver.h"
#include "agent/preflight/nvidia_version.h"
#include "agent/topology/topology.h"
#include "agent/verbs/device_info.h"
#include "common/status.h"
#include "common/version.h"

namespace gdrbench::agent::service {
namespace {

void FillGpus(const FsRoot& fs, v1::NodeInfo& info) {
  auto driver = cuda::CudaDriver::Load();
  if (!driver.ok()) {
    info.set_gpus_absent_reason(std::string(driver.status().message()));
    return;
  }
  if (auto v = (*driver)->DriverVersion(); v.ok()) info.mutable_software()->set_cuda_driver(*v);
  auto gpus = (*driver)->ListDevices();
  if (!gpus.ok()) {
    info.set_gpus_absent_reason(std::string(gpus.status().message()));
    return;
  }
  if (gpus->empty()) info.set_gpus_absent_reason("the CUDA driver sees no GPU");
  for (const auto& g : *gpus) {
    v1::GpuInfo* out = info.add_gpus();
    out->set_index(g.index);
    out->set_uuid(g.uuid);
    out->set_name(g.name);
    out->set_pci_bdf(g.pci_bdf);
    out->set_memory_total_bytes(g.memory_total_bytes);
    out->set_compute_mode(g.compute_mode);
    int numa = -1;
    if (auto s = fs.ReadLine(absl::StrCat("/sys/bus/pci/devices/", g.pci_bdf, "/numa_node"));
        s.ok()) {
      (void)absl::SimpleAtoi(*s, &numa);
    }
    out->set_numa_node(numa);
  }
}

// The GPU x NIC relations and the rail map from the PCI tree (rail NICs
// only: agent/topology's "Rail NICs"), and each NIC's rail role. GPUs are
// numbered by CUDA when the driver listed them (matched by PCI address),
// otherwise in PCI bus order as nvidia-smi numbers them.
void FillTopology(const FsRoot& fs, const NodeInfoConfig& config, v1::NodeInfo& info) {
  auto topo = topology::DiscoverTopology(fs, config.devices);
  if (!topo.ok()) return;
  auto index_of = [&](int pci_index) -> uint32_t {
    const std::string& bdf = topo->gpus[pci_index].pci.bdf;
    for (const auto& g : info.gpus()) {
      if (g.pci_bdf() == bdf) return g.index();
    }
    return static_cast<uint32_t>(pci_index);
  };
  auto path = [](topology::PathType p) { return static_cast<v1::PathType>(static_cast<int>(p)); };
  for (const auto& r : topo->relations) {
    v1::GpuNicRelation* out = info.add_relations();
    out->set_gpu_index(index_of(r.gpu_index));
    out->set_nic_device(r.nic);
    out->set_path(path(r.path));
  }
  for (const auto& r : topo->rails) {
    if (r.gpu_index < 0) continue;  // a named software NIC: no GPU to pair
    v1::RailAssignment* out = info.add_rails();
    out->set_nic_device(r.nic);
    out->set_gpu_index(index_of(r.gpu_index));
    out->set_path(path(r.path));
  }
  for (auto& nic : *info.mutable_nics()) {
    nic.set_gpu_rail(topo->IsRail(nic.device()));
    for (const auto& n : topo->not_rails) {
      if (n.nic == nic.device()) nic.set_not_rail_reason(n.why);
    }
  }
}

}  // namespace

v1::PortState ToProto(verbs::PortState state) {
  switch (state) {
    case verbs::PortState::kNop: return v1::PORT_STATE_NOP;
    case verbs::PortState::kDown: return v1::PORT_STATE_DOWN;
    case verbs::PortState::kInit: return v1::PORT_STATE_INIT;
    case verbs::PortState::kArmed: return v1::PORT_STATE_ARMED;
    case verbs::PortState::kActive: return v1::PORT_STATE_ACTIVE;
    case verbs::PortState::kActiveDefer: return v1::PORT_STATE_ACTIVE_DEFER;
    case verbs::PortState::kUnread: break;
  }
  return v1::PORT_STATE_UNSPECIFIED;
}

// The deprecated string is written here and nowhere else in the agent (protoc
// marks its accessors deprecated).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void SetPortState(verbs::PortState state, v1::RdmaPort& port) {
  port.set_port_state(ToProto(state));
  port.set_state(verbs::PortStateName(state));
}
#pragma GCC diagnostic pop

absl::StatusOr<v1::NodeInfo> CollectNodeInfo(const FsRoot& fs, const NodeInfoConfig& config) {
  v1::NodeInfo info;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  info.set_hostname(host);
  for (const auto& d : config.devices) info.add_devices_owned(d);
  v1::SoftwareVersions* sw = info.mutable_software();
  sw->set_agent(kVersion);
  utsname u{};
  if (uname(&u) == 0) sw->set_kernel(u.release);
  sw->set_nvidia_driver(preflight::ReadNvidiaVersion(fs).version);
  sw->set_rdma_core(verbs::RdmaCoreVersion(fs));
  if (auto ofed = fs.ReadLine("/usr/bin/ofed_info"); ofed.ok()) {
    // ofed_info is a script whose first echo names the version; the
    // preflight check reads it properly. Here: only whether it exists.
    sw->set_ofed("installed");
  }

  std::string absent;
  std::vector<verbs::DeviceInfo> nics;
  if (config.nics != nullptr) {
    nics = *config.nics;
  } else {
    GDR_ASSIGN_OR_RETURN(nics, verbs::ListDevices(fs, config.devices, &absent));
  }
  if (nics.empty()) info.set_nics_absent_reason(absent);
  for (const auto& n : nics) {
    v1::NicInfo* out = info.add_nics();
    out->set_device(n.name);
    out->set_pci_bdf(n.pci_bdf);
    out->set_numa_node(n.numa_node);
    out->set_firmware_version(n.firmware_version);
    out->set_node_guid(n.node_guid);
    out->set_transport(n.transport);
    for (const auto& p : n.ports) {
      v1::RdmaPort* po = out->add_ports();
      po->set_port_num(p.port_num);
      SetPortState(p.state, *po);
      po->set_physical_state(p.physical_state);
      po->set_link_layer(p.link_layer);
      po->set_active_rate_gbps(p.active_rate_gbps);
      po->set_active_speed(p.active_speed);
      po->set_active_width_lanes(p.active_width_lanes);
      po->set_active_mtu_bytes(p.active_mtu_bytes);
      po->set_max_mtu_bytes(p.max_mtu_bytes);
      po->set_lid(p.lid);
      po->set_netdev(p.netdev);
      for (const auto& ip : p.ip_addresses) po->add_ip_addresses(ip);
      for (const auto& g : p.gids) {
        v1::Gid* go = po->add_gids();
        go->set_index(g.index);
        go->set_gid(g.gid);
        go->set_type(g.type);
        go->set_netdev(g.netdev);
      }
    }
  }
  FillGpus(fs, info);
  FillTopology(fs, config, info);
  absl::Time now = absl::Now();
  info.mutable_collected_at()->set_seconds(absl::ToUnixSeconds(now));
  return info;
}

}  // namespace gdrbench::agent::service
