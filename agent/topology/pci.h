// PCI devices as sysfs describes them, read through an FsRoot so the same
// code runs on a live node and on a captured tree.
//
// A device's place in the PCIe hierarchy is the canonical path of
// /sys/bus/pci/devices/<BDF>, e.g.
//   /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0
// root complex ^^^^^^^^^^^ root port   ^ switch up  ^ switch down  ^ device
//
// Thread safety: free functions without state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fs_root.h"

namespace gdrbench::agent::topology {

struct PciLink {
  double current_gts = 0;  // GT/s per lane; 0 when sysfs does not say
  double max_gts = 0;
  int current_width = 0;   // lanes; 0 when sysfs does not say
  int max_width = 0;
  bool known() const { return max_gts > 0 || max_width > 0; }
  bool speed_degraded() const { return current_gts > 0 && max_gts > 0 && current_gts < max_gts; }
  bool width_degraded() const {
    return current_width > 0 && max_width > 0 && current_width < max_width;
  }
};

struct PciDevice {
  std::string bdf;          // "0000:18:00.0"
  std::string sysfs_path;   // canonical, "/sys/devices/pci0000:15/.../0000:18:00.0"
  std::string root_complex; // "pci0000:15": the host bridge the device hangs off
  // PCI functions between the root complex and the device, root port first,
  // the device itself excluded.
  std::vector<std::string> ancestors;
  uint32_t class_code = 0;  // 0x030200 (3D controller), 0x020700 (InfiniBand), ...
  uint32_t vendor = 0;      // 0x10de NVIDIA, 0x15b3 Mellanox
  uint32_t device = 0;
  int numa_node = -1;       // -1 when the platform does not say
  PciLink link;

  bool is_bridge() const { return (class_code >> 8) == 0x0604; }
  bool is_nvidia_gpu() const {
    return vendor == 0x10de && ((class_code >> 16) == 0x03);
  }
};

// Reads one device. NOT_FOUND when /sys/bus/pci/devices/<bdf> is absent.
absl::StatusOr<PciDevice> ReadPciDevice(const FsRoot& fs, const std::string& bdf);

// Every PCI function under /sys/bus/pci/devices, in BDF order.
// NOT_FOUND when the directory is absent.
absl::StatusOr<std::vector<std::string>> ListPciFunctions(const FsRoot& fs);

// True for "0000:18:00.0"-shaped names.
bool IsBdf(const std::string& name);

// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; 0 for anything else
// ("Unknown", empty).
double ParseLinkSpeed(const std::string& text);

// PCIe Access Control Services of a bridge, from its extended config space
// (sysfs `config`, bytes 0x100 and up, readable by root only).
struct AcsControl {
  uint16_t control = 0;  // the ACS Control register
  // P2P Request Redirect, Completion Redirect or Upstream Forwarding enabled:
  // peer-to-peer traffic below this bridge is sent up to the root complex.
  bool redirects_p2p() const { return (control & 0x1c) != 0; }
};
// std::nullopt when the device has no ACS capability. NOT_FOUND when the
// config file is absent; PERMISSION_DENIED when only the first 256 bytes are
// readable (not root), so the extended capabilities cannot be seen.
absl::StatusOr<std::optional<AcsControl>> ReadAcs(const FsRoot& fs, const std::string& bdf);

}  // namespace gdrbench::agent::topology
