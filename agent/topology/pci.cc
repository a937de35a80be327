#include "agent/topology/pci.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace gdrbench::agent::topology {
namespace {

uint32_t ReadHex(const FsRoot& fs, const std::string& path) {
  auto s = fs.ReadLine(path);
  uint32_t v = 0;
  if (s.ok()) (void)absl::SimpleHexAtoi(*s, &v);
  return v;
}

int ReadInt(const FsRoot& fs, const std::string& path, int fallback) {
  auto s = fs.ReadLine(path);
  int v = fallback;
  if (s.ok() && !absl::SimpleAtoi(*s, &v)) v = fallback;
  return v;
}

}  // namespace

bool IsBdf(const std::string& s) {
  // dddd:bb:dd.f
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

double ParseLinkSpeed(const std::string& text) {
  // The number before "GT/s"; strtod stops at the first non-numeric character.
  if (text.find("GT/s") == std::string::npos) return 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? 0 : v;
}

absl::StatusOr<std::vector<std::string>> ListPciFunctions(const FsRoot& fs) {
  GDR_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDir("/sys/bus/pci/devices"));
  std::vector<std::string> out;
  for (auto& n : names) {
    if (IsBdf(n)) out.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<PciDevice> ReadPciDevice(const FsRoot& fs, const std::string& bdf) {
  std::string link = absl::StrCat("/sys/bus/pci/devices/", bdf);
  if (!fs.Exists(link)) {
    return absl::NotFoundError(absl::StrCat("PCI device ", bdf, ": ", fs.Resolve(link),
                                            " is absent"));
  }
  PciDevice d;
  d.bdf = bdf;
  GDR_ASSIGN_OR_RETURN(d.sysfs_path, fs.RealPath(link));
  for (absl::string_view part : absl::StrSplit(d.sysfs_path, '/', absl::SkipEmpty())) {
    std::string p(part);
    if (p.rfind("pci", 0) == 0 && d.root_complex.empty()) {
      d.root_complex = p;
    } else if (IsBdf(p) && p != bdf) {
      d.ancestors.push_back(p);
    }
  }
  std::string dir = d.sysfs_path;
  d.class_code = ReadHex(fs, dir + "/class");
  d.vendor = ReadHex(fs, dir + "/vendor");
  d.device = ReadHex(fs, dir + "/device");
  d.numa_node = ReadInt(fs, dir + "/numa_node", -1);
  if (auto s = fs.ReadLine(dir + "/current_link_speed"); s.ok()) d.link.current_gts = ParseLinkSpeed(*s);
  if (auto s = fs.ReadLine(dir + "/max_link_speed"); s.ok()) d.link.max_gts = ParseLinkSpeed(*s);
  d.link.current_width = ReadInt(fs, dir + "/current_link_width", 0);
  d.link.max_width = ReadInt(fs, dir + "/max_link_width", 0);
  return d;
}

absl::StatusOr<std::optional<AcsControl>> ReadAcs(const FsRoot& fs, const std::string& bdf) {
  GDR_ASSIGN_OR_RETURN(std::string cfg, fs.ReadFile(absl::StrCat("/sys/bus/pci/devices/", bdf, "/config")));
  if (cfg.size() < 256) {
    return absl::PermissionDeniedError(absl::StrCat(
        "PCI config space of ", bdf, ": only ", cfg.size(),
        " bytes readable (extended capabilities need root)"));
  }
  if (cfg.size() < 0x104) return std::optional<AcsControl>();  // conventional PCI: no ACS
  auto u32 = [&](size_t off) -> uint32_t {
    if (off + 4 > cfg.size()) return 0;
    const auto* b = reinterpret_cast<const unsigned char*>(cfg.data() + off);
    return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  };
  // Extended capability list: header = id (15:0), version (19:16), next (31:20).
  size_t off = 0x100;
  for (int guard = 0; off >= 0x100 && guard < 64; ++guard) {
    uint32_t hdr = u32(off);
    if (hdr == 0 || hdr == 0xffffffff) break;
    if ((hdr & 0xffff) == 0x000d) {  // ACS
      uint32_t w = u32(off + 4);     // capability (15:0), control (31:16)
      return std::optional<AcsControl>(AcsControl{static_cast<uint16_t>(w >> 16)});
    }
    off = (hdr >> 20) & 0xffc;
  }
  return std::optional<AcsControl>();
}

}  // namespace gdrbench::agent::topology
