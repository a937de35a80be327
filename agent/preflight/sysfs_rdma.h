// RdmaQuery over /sys/class/infiniband, read through an FsRoot: what the
// offline mode (--fs-root) and the unit tests use. It reports what sysfs
// carries (ports, states, link layer, rate, GIDs, PCI address); IP addresses
// and the InfiniBand active MTU are not in sysfs and stay empty/0. The RoCE
// active MTU is derived from the netdev MTU as the kernel does.
// Thread safety: immutable after construction.
#pragma once

#include "agent/preflight/hardware.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

class SysfsRdma : public RdmaQuery {
 public:
  explicit SysfsRdma(const FsRoot& fs) : fs_(fs) {}
  std::string source() const override { return "sysfs"; }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* absent_reason) override;
  // UNAVAILABLE: sysfs cannot tell.
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string& device) override;

 private:
  const FsRoot& fs_;
};

// The RoCE path MTU for a netdev MTU (the kernel's iboe_get_mtu: the largest
// IB MTU that fits after the RoCE v2 headers), 0 when below 256.
uint32_t RoceMtuForNetdevMtu(uint32_t netdev_mtu);

}  // namespace gdrbench::agent::preflight
