#include "agent/preflight/capture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/preflight/extract.h"
#include "agent/preflight/kernel_log.h"
#include "agent/preflight/kernel_modules.h"
#include "agent/preflight/temp_tree.h"
#include "agent/topology/pci.h"
#include "common/status.h"
#include "common/version.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::preflight {
namespace {

class Stager {
 public:
  Stager(const FsRoot& src, std::string dest) : src_(src), dest_(std::move(dest)) {}

  // A regular file, written at its canonical path with every symlink on the
  // way recreated. Missing or unreadable files are skipped (sysfs has many).
  void File(const std::string& path) {
    auto real = Canonical(path);
    if (!real) return;
    auto content = src_.ReadFile(*real);
    if (!content.ok()) return;
    Write(*real, *content);
  }

  // Files in a sysfs directory: the named attributes only.
  void Attributes(const std::string& dir, std::initializer_list<const char*> names) {
    for (const char* n : names) File(absl::StrCat(dir, "/", n));
  }

  // A symlink as stored, plus the symlinks on the way to it.
  void Link(const std::string& path) { Canonical(path, /*keep_last=*/true); }

  void Write(const std::string& path, const std::string& content) {
    const TreeWriter writing;
    MakeParents(path);
    std::ofstream out(dest_ + path, std::ios::binary | std::ios::trunc);
    out << content;
  }

  void Empty(const std::string& path) { Write(path, ""); }

  void Dir(const std::string& path) {
    const TreeWriter writing;
    MakeParents(path + "/.");
  }

 private:
  void MakeParents(const std::string& path) {
    std::string cur = dest_;
    std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      cur += "/" + parts[i];
      mkdir(cur.c_str(), 0755);
    }
  }

  // Walks `path` component by component in the source; recreates each
  // symlink met in the staging tree; returns the canonical path.
  std::optional<std::string> Canonical(const std::string& path, bool keep_last = false) {
    std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
    std::string cur;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string next = cur + "/" + parts[i];
      auto target = src_.ReadLink(next);
      if (target.ok()) {
        if (!links_.count(next)) {
          const TreeWriter writing;
          links_.insert(next);
          MakeParents(next);
          std::string host = dest_ + next;
          unlink(host.c_str());
          if (symlink(target->c_str(), host.c_str()) != 0) return std::nullopt;
        }
        if (keep_last && i + 1 == parts.size()) return next;
        auto real = src_.RealPath(next);
        if (!real.ok()) return std::nullopt;
        // Recreate links inside the target's own path too.
        auto again = Canonical(*real);
        if (!again) return std::nullopt;
        cur = *again;
      } else {
        if (!src_.Exists(next)) return std::nullopt;
        cur = next;
      }
    }
    return cur;
  }

  const FsRoot& src_;
  std::string dest_;
  std::set<std::string> links_;
};

// Keeps the dpkg status blocks of the packages the checks look at.
std::string FilterDpkg(const std::string& status) {
  std::string out;
  for (absl::string_view block : absl::StrSplit(status, "\n\n")) {
    for (const char* pkg : {"Package: libibverbs1\n", "Package: rdma-core\n", "Package: nvidia-",
                            "Package: libnvidia-", "Package: cuda-drivers", "Package: mlnx-",
                            "Package: doca-", "Package: ofed"}) {
      if (absl::StartsWith(block, pkg)) {
        absl::StrAppend(&out, block, "\n\n");
        break;
      }
    }
  }
  return out;
}

// modules.dep of the running kernel (the NVIDIA and RDMA lines: what
// FindModuleFile reads) and the tail of the nvidia-peermem module file,
// where a module signature ends (ModuleFileSigned reads the tail only).
void StageModules(const FsRoot& src, Stager& s) {
  ModuleFile peermem = FindModuleFile(src, "nvidia-peermem");
  if (!peermem.dep_readable) return;
  auto dep = src.ReadFile(peermem.dep_file);
  if (!dep.ok()) return;
  std::string kept;
  for (absl::string_view line : absl::StrSplit(*dep, '\n')) {
    for (const char* word : {"nvidia", "peer_mem", "peermem", "mlx", "ib_", "rdma", "infiniband"}) {
      if (absl::StrContains(line.substr(0, line.find(':')), word)) {
        absl::StrAppend(&kept, line, "\n");
        break;
      }
    }
  }
  s.Write(peermem.dep_file, kept);
  if (peermem.path.empty()) return;
  if (auto ko = src.ReadFile(peermem.path); ko.ok()) {
    constexpr size_t kTail = 4096;
    s.Write(peermem.path, ko->size() > kTail ? ko->substr(ko->size() - kTail) : *ko);
  }
}

}  // namespace

std::string CaptureInfoText(const FsRoot& src) {
  // The node's name: its own hostname live, the tree's /etc/hostname from a
  // tree (a capture of a capture names the first node).
  std::string host;
  if (src.is_live()) {
    char buf[256] = {};
    gethostname(buf, sizeof(buf) - 1);
    host = buf;
  } else if (auto h = src.ReadLine("/etc/hostname"); h.ok()) {
    host = *h;
  }
  std::string kernel = src.ReadLine("/proc/sys/kernel/osrelease").value_or("");
  return absl::StrCat("gdrbench capture\n", "captured_at: ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                                                                              absl::UTCTimeZone()),
                      "\n", "host: ", host, "\n", "kernel: ", kernel, "\n", "agent: gdrbench-agent ", kVersion,
                      "\n", "source: ", src.root(), "\n");
}

absl::StatusOr<std::string> CaptureInfo(const FsRoot& tree) {
  auto text = tree.ReadFile(kCaptureInfoFile, 4096);
  if (!text.ok()) {
    if (text.status().code() == absl::StatusCode::kNotFound) {
      return std::string("capture without time or agent version (made before gdrbench 0.1)");
    }
    return text.status();
  }
  std::map<std::string, std::string> kv;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::pair<absl::string_view, absl::string_view> p = absl::StrSplit(line, absl::MaxSplits(": ", 1));
    if (!p.second.empty()) kv[std::string(p.first)] = std::string(p.second);
  }
  if (kv.count("captured_at") == 0) {
    // An older capture's one line: "captured by gdrbench-agent capture on HOST from /".
    std::string first(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
    return absl::StrCat(first, " (no time or agent version)");
  }
  return absl::StrCat("captured ", kv["captured_at"], " on ", kv["host"].empty() ? "?" : kv["host"], " by ",
                      kv["agent"].empty() ? "an unknown agent" : kv["agent"],
                      kv["kernel"].empty() ? "" : absl::StrCat(", kernel ", kv["kernel"]));
}

namespace {

// The kernel config's lines about dma-buf and the IOMMU.
void StageKernelConfig(const FsRoot& src, Stager& s) {
  auto rel = src.ReadLine("/proc/sys/kernel/osrelease");
  if (!rel.ok()) return;
  if (auto cfg = src.ReadFile(absl::StrCat("/boot/config-", *rel)); cfg.ok()) {
    std::string kept;
    for (absl::string_view line : absl::StrSplit(*cfg, '\n')) {
      if (absl::StrContains(line, "DMA_SHARED_BUFFER") || absl::StrContains(line, "IOMMU")) {
        absl::StrAppend(&kept, line, "\n");
      }
    }
    s.Write(absl::StrCat("/boot/config-", *rel), kept);
  }
}

// The system's files: kernel, driver versions, packages, module options.
void StageSystem(const FsRoot& src, Stager& s) {
  for (const char* f : {"/proc/driver/nvidia/version", "/proc/sys/kernel/osrelease", "/proc/cmdline",
                        "/proc/self/limits", "/proc/self/status", "/proc/1/cgroup", "/proc/modules",
                        "/proc/sys/kernel/tainted", "/sys/kernel/security/lockdown",
                        "/etc/modules", "/usr/bin/ofed_info", "/.dockerenv", "/run/.containerenv",
                        "/etc/os-release", "/etc/hostname"}) {
    s.File(f);
  }
  StageModules(src, s);
  // The kernel log: live from /dev/kmsg; from a tree, the copy it carries.
  if (src.is_live()) {
    if (auto log = MakeDevKmsgLog()->Messages(); log.ok()) {
      s.Write(kCapturedDmesg, absl::StrCat(absl::StrJoin(*log, "\n"), "\n"));
    }
  } else {
    s.File(kCapturedDmesg);
  }
  if (auto dpkg = src.ReadFile("/var/lib/dpkg/status", limits::kMaxPackageDbBytes); dpkg.ok()) {
    s.Write("/var/lib/dpkg/status", FilterDpkg(*dpkg));
  }
  StageKernelConfig(src, s);
  for (const char* dir : {"/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d",
                          "/lib/modules-load.d", "/etc/modprobe.d"}) {
    if (auto names = src.ListDir(dir); names.ok()) {
      for (const auto& n : *names) s.File(absl::StrCat(dir, "/", n));
    }
  }
  for (const char* m : {"nvidia", "nvidia_peermem", "nv_peer_mem", "nvidia_uvm", "ib_core",
                        "ib_uverbs", "rdma_ucm", "mlx5_core", "mlx5_ib", "rdma_rxe", "siw"}) {
    s.Attributes(absl::StrCat("/sys/module/", m), {"version", "initstate", "taint"});
  }
  if (auto peers = src.ListDir("/sys/kernel/mm/memory_peers"); peers.ok()) {
    for (const auto& p : *peers) s.File(absl::StrCat("/sys/kernel/mm/memory_peers/", p, "/version"));
  }
}

// Secure Boot's variables and the IOMMU units.
void StageFirmware(const FsRoot& src, Stager& s) {
  if (src.Exists("/sys/firmware/efi")) {
    s.Dir("/sys/firmware/efi");
    if (auto vars = src.ListDir("/sys/firmware/efi/efivars"); vars.ok()) {
      for (const auto& v : *vars) {
        if (absl::StartsWith(v, "SecureBoot-") || absl::StartsWith(v, "SetupMode-")) {
          s.File(absl::StrCat("/sys/firmware/efi/efivars/", v));
        }
      }
    }
  }
  if (auto units = src.ListDir("/sys/class/iommu"); units.ok()) {
    s.Dir("/sys/class/iommu");
    for (const auto& u : *units) s.Link(absl::StrCat("/sys/class/iommu/", u));
  }
}

// Every PCI function's identity (the topology scans them all); adds the
// GPUs to `wanted`.
void StagePciFunctions(const FsRoot& src, Stager& s, std::set<std::string>& wanted) {
  auto fns = topology::ListPciFunctions(src);
  if (!fns.ok()) return;
  for (const auto& bdf : *fns) {
    std::string dev = absl::StrCat("/sys/bus/pci/devices/", bdf);
    s.Link(dev);
    s.Attributes(dev, {"class", "vendor", "device"});
    auto cls = src.ReadLine(dev + "/class");
    auto ven = src.ReadLine(dev + "/vendor");
    if (cls.ok() && ven.ok() && *ven == "0x10de" && absl::StartsWith(*cls, "0x03")) wanted.insert(bdf);
  }
}

// One RDMA port: its state, counters and the GIDs in use; adds their
// network devices to `netdevs`.
void StageRdmaPort(const FsRoot& src, Stager& s, const std::string& port, std::set<std::string>& netdevs) {
  s.Attributes(port, {"state", "phys_state", "link_layer", "rate", "lid", "sm_lid"});
  for (const char* dir : {"counters", "hw_counters"}) {
    if (auto names = src.ListDir(absl::StrCat(port, "/", dir)); names.ok()) {
      for (const auto& c : *names) s.File(absl::StrCat(port, "/", dir, "/", c));
    }
  }
  auto gids = src.ListDir(port + "/gids");
  if (!gids.ok()) return;
  for (const auto& g : *gids) {
    auto gid = src.ReadLine(absl::StrCat(port, "/gids/", g));
    // Empty table slots (all zero) are left out: rxe has hundreds.
    if (!gid.ok() || *gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
    s.File(absl::StrCat(port, "/gids/", g));
    s.File(absl::StrCat(port, "/gid_attrs/types/", g));
    s.File(absl::StrCat(port, "/gid_attrs/ndevs/", g));
    if (auto nd = src.ReadLine(absl::StrCat(port, "/gid_attrs/ndevs/", g)); nd.ok()) netdevs.insert(*nd);
  }
}

// Every RDMA device and its ports; adds their PCI functions to `wanted`
// and the ports' network devices to `netdevs`.
void StageRdmaDevices(const FsRoot& src, Stager& s, std::set<std::string>& wanted,
                      std::set<std::string>& netdevs) {
  auto ibdevs = src.ListDir("/sys/class/infiniband");
  if (!ibdevs.ok()) return;
  s.Dir("/sys/class/infiniband");
  for (const auto& name : *ibdevs) {
    std::string ib = absl::StrCat("/sys/class/infiniband/", name);
    s.Link(ib);
    s.Attributes(ib, {"fw_ver", "node_guid", "node_type", "node_desc"});
    s.Link(ib + "/device");
    if (auto real = src.RealPath(ib + "/device"); real.ok()) {
      std::string last = real->substr(real->rfind('/') + 1);
      if (topology::IsBdf(last)) wanted.insert(last);
    }
    auto ports = src.ListDir(ib + "/ports");
    if (!ports.ok()) continue;
    for (const auto& p : *ports) StageRdmaPort(src, s, absl::StrCat(ib, "/ports/", p), netdevs);
  }
}

// Links, NUMA, config space and IOMMU group of the `wanted` functions and
// their bridges.
void StagePciDetails(const FsRoot& src, Stager& s, std::set<std::string>& wanted) {
  for (const auto& bdf : std::set<std::string>(wanted)) {
    if (auto d = topology::ReadPciDevice(src, bdf); d.ok()) {
      for (const auto& a : d->ancestors) wanted.insert(a);
    }
  }
  for (const auto& bdf : wanted) {
    std::string dev = absl::StrCat("/sys/bus/pci/devices/", bdf);
    s.Attributes(dev, {"numa_node", "local_cpulist", "current_link_speed", "current_link_width",
                       "max_link_speed", "max_link_width", "config"});
    s.Link(dev + "/iommu_group");
    if (auto group = src.RealPath(dev + "/iommu_group"); group.ok()) s.File(*group + "/type");
  }
}

// Device nodes and CUDA driver libraries as empty files: the checks only
// test their presence.
void StagePresenceFiles(const FsRoot& src, Stager& s) {
  for (const char* dir : {"/dev/infiniband", "/dev"}) {
    auto names = src.ListDir(dir);
    if (!names.ok()) continue;
    for (const auto& n : *names) {
      bool want = std::string(dir) == "/dev/infiniband" || absl::StartsWith(n, "nvidia");
      if (want && !src.IsDirectory(absl::StrCat(dir, "/", n))) s.Empty(absl::StrCat(dir, "/", n));
    }
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                          "/usr/lib", "/usr/local/nvidia/lib64"}) {
    auto names = src.ListDir(dir);
    if (!names.ok()) continue;
    for (const auto& n : *names) {
      if (absl::StartsWith(n, "libcuda.so.")) s.Empty(absl::StrCat(dir, "/", n));
    }
  }
}

}  // namespace

absl::Status StageTree(const FsRoot& src, const std::string& dest) {
  Stager s(src, dest);
  StageSystem(src, s);
  StageFirmware(src, s);
  // PCI: every function's identity; links, NUMA, config space and IOMMU
  // group of GPUs, RDMA NICs and their bridges.
  std::set<std::string> wanted;
  StagePciFunctions(src, s, wanted);
  std::set<std::string> netdevs;
  StageRdmaDevices(src, s, wanted, netdevs);
  for (const auto& nd : netdevs) {
    s.Link(absl::StrCat("/sys/class/net/", nd));
    s.Attributes(absl::StrCat("/sys/class/net/", nd), {"mtu", "operstate", "address"});
  }
  StagePciDetails(src, s, wanted);
  StagePresenceFiles(src, s);
  s.Write(kCaptureInfoFile, CaptureInfoText(src));
  return absl::OkStatus();
}

absl::Status CaptureTree(const FsRoot& src, const std::string& out_tar_gz) {
  if (out_tar_gz.empty()) return absl::InvalidArgumentError("capture needs --out FILE.tar.gz");
  std::string dir = MakeTempTree("gdrbench-capture-");
  if (dir.empty()) return ErrnoToStatus(errno, "mkdtemp for the capture");
  absl::Status st = StageTree(src, dir);
  if (st.ok()) st = PackCapture(dir, out_tar_gz);
  RemoveTree(dir);
  return st;
}

absl::StatusOr<std::string> ExtractTree(const std::string& tarball) {
  std::string dir = MakeTempTree("gdrbench-tree-");  // 0700, removed on signals too
  if (dir.empty()) return ErrnoToStatus(errno, "mkdtemp for the capture");
  if (absl::Status st = ExtractCapture(tarball, dir); !st.ok()) {
    RemoveTree(dir);
    return st;
  }
  return dir;
}

}  // namespace gdrbench::agent::preflight
