// The GPU x RDMA NIC topology of one node, from the PCI tree in sysfs, with
// each pair classified exactly as `nvidia-smi topo -m` (NVML's
// nvmlGpuTopologyLevel_t) defines it:
//   PIX   the path crosses at most one PCIe switch
//   PXB   several PCIe switches, no host bridge
//   PHB   through a PCIe host bridge (the CPU's root complex)
//   NODE  between host bridges of one NUMA node
//   SYS   across the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)
// A PCIe switch is one upstream port plus its downstream ports (two levels of
// PCI bridge functions in sysfs); root ports belong to the host bridge.
//
// GPUs are numbered in PCI bus order, as nvidia-smi numbers them.
// Thread safety: free functions without state.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/topology/pci.h"
#include "common/fs_root.h"

namespace gdrbench::agent::topology {

enum class PathType { kPix = 1, kPxb = 2, kPhb = 3, kNode = 4, kSys = 5 };

// "PIX", "PXB", ...
const char* PathTypeName(PathType p);

struct Gpu {
  int index = 0;  // PCI bus order among NVIDIA GPUs
  PciDevice pci;
};

struct Nic {
  std::string name;       // "mlx5_0"
  bool has_pci = false;   // false for software devices (rxe, siw)
  PciDevice pci;
};

struct Relation {
  int gpu_index = 0;
  std::string nic;
  PathType path = PathType::kSys;
  // The PCI bridge functions between the GPU and the NIC (empty when the
  // path leaves the root complex).
  std::vector<std::string> bridges;
};

struct Rail {
  std::string nic;
  int gpu_index = 0;
  PathType path = PathType::kSys;
};

struct Topology {
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;            // every RDMA device, in name order
  std::vector<Relation> relations;  // every GPU x PCI NIC pair, GPU-major
  std::vector<Rail> rails;          // one per PCI NIC that has a GPU
  std::vector<std::string> notes;   // what could not be read, and why

  const Relation* Find(int gpu_index, const std::string& nic) const;
};

// Classifies the path between two PCI functions. `bridges`, when not null,
// receives the bridge functions on the path.
PathType Classify(const PciDevice& a, const PciDevice& b, std::vector<std::string>* bridges);

// NVIDIA GPUs from /sys/bus/pci/devices and RDMA devices from
// /sys/class/infiniband. A node without either is an empty list, not an error
// (notes says why). INTERNAL only when sysfs is unreadable.
absl::StatusOr<Topology> DiscoverTopology(const FsRoot& fs);

// The best GPU for each NIC: the closest path; among equals, the GPU that is
// the rail of fewest NICs so far, then the lowest index. Pure.
std::vector<Rail> ComputeRails(const std::vector<Gpu>& gpus, const std::vector<Nic>& nics,
                               const std::vector<Relation>& relations);

// The GPU x NIC block of `nvidia-smi topo -m`: a header row "NIC0 NIC1 ...",
// one row per GPU, and the NIC legend ("NIC0: mlx5_0").
std::string FormatMatrix(const Topology& topo);

}  // namespace gdrbench::agent::topology
