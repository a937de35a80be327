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

// A rail NIC and the GPU suggested for it (the rail map). See "Rail NICs"
// below for which NICs are rails.
struct Rail {
  std::string nic;
  int gpu_index = 0;  // -1: a named NIC without a PCI function (no GPU path)
  PathType path = PathType::kSys;
  bool named = false;  // a rail because the inventory or --devices names it
};

// Rail NICs (defined here and nowhere else; docs/architecture.md says the same):
//   - every GPU's nearest PCI NIC, when that path is PIX, PXB or PHB; a tie
//     keeps all the NICs at that distance;
//   - every NIC that the inventory or the agent's --devices names as a rail.
// Every other NIC (storage, in-band, management: a GPU's nearest NIC only at
// NODE/SYS, or never anyone's nearest) is "not a GPU rail": reported, tested
// only when asked, never a reason to FAIL the GPUDirect checks.
struct NotRail {
  std::string nic;
  std::string why;  // "nearest GPU 0 is SYS", "software RDMA device", ...
};

struct Topology {
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;            // every RDMA device, in name order
  std::vector<Relation> relations;  // every GPU x PCI NIC pair, GPU-major
  std::vector<Rail> rails;          // one per rail NIC, in NIC name order
  std::vector<NotRail> not_rails;   // every other NIC, in name order
  std::vector<std::string> notes;   // what could not be read, and why

  const Relation* Find(int gpu_index, const std::string& nic) const;
  // The rail entry of `nic`, nullptr when it is not a GPU rail.
  const Rail* RailOf(const std::string& nic) const;
  bool IsRail(const std::string& nic) const { return RailOf(nic) != nullptr; }
  // Whether a fault on `nic` (port down, no GID, small MTU, slow link,
  // errors) is a FAIL rather than a WARN: it is a rail, or the node has no
  // GPU at all (then there are no GPU rails and every NIC is what a sweep
  // tests, with host memory).
  bool Strict(const std::string& nic) const { return gpus.empty() || IsRail(nic); }
  // The closest NICs of GPU `gpu_index` (all of them on a tie) and their
  // path; empty when no PCI NIC is paired with it.
  std::vector<const Relation*> Nearest(int gpu_index) const;
};

// Classifies the path between two PCI functions. `bridges`, when not null,
// receives the bridge functions on the path.
PathType Classify(const PciDevice& a, const PciDevice& b, std::vector<std::string>* bridges);

// NVIDIA GPUs from /sys/bus/pci/devices and RDMA devices from
// /sys/class/infiniband, with the rails chosen by AssignRails. `named`: NICs
// the inventory or --devices names as rails. A node without GPUs or NICs is
// an empty list, not an error (notes says why). INTERNAL only when sysfs is
// unreadable.
absl::StatusOr<Topology> DiscoverTopology(const FsRoot& fs, const std::vector<std::string>& named = {});

// Fills t.rails and t.not_rails from t.gpus, t.nics and t.relations by the
// rule above. The GPU suggested for a rail NIC is the closest one; among
// equals, the GPU that is the rail of fewest NICs so far, then the lowest
// index (so a GPU pair sharing two NICs gets one each). A named NIC that no
// GPU is near keeps its closest GPU (NODE/SYS), or none when it has no PCI
// function (gpu_index -1). Pure.
void AssignRails(Topology& t, const std::vector<std::string>& named = {});

// The GPU x NIC block of `nvidia-smi topo -m`: a header row "NIC0 NIC1 ...",
// one row per GPU, and the NIC legend ("NIC0: mlx5_0").
std::string FormatMatrix(const Topology& topo);

}  // namespace gdrbench::agent::topology
