#include "agent/preflight/peermem.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gdrbench::agent::preflight {

const std::vector<std::string>& PeermemMarkers() {
  static const std::vector<std::string> kMarkers = {
      "/sys/module/nvidia_peermem/version",
      "/sys/kernel/mm/memory_peers/nv_mem/version",
      "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
  };
  return kMarkers;
}

std::vector<std::string> ModuleListFiles(const FsRoot& fs) {
  std::vector<std::string> files = {"/etc/modules"};
  for (const char* dir : {"/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d",
                          "/lib/modules-load.d"}) {
    auto names = fs.ListDir(dir);
    if (!names.ok()) continue;
    for (const auto& n : *names) {
      if (absl::EndsWith(n, ".conf")) files.push_back(absl::StrCat(dir, "/", n));
    }
  }
  return files;
}

bool NamesPeermem(absl::string_view word) {
  return word == "nvidia-peermem" || word == "nvidia_peermem" || word == "nv_peer_mem";
}

}  // namespace gdrbench::agent::preflight
