// What the two peermem checks share: where a loaded GPU peer-memory client
// shows in sysfs, and where module lists for boot live.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

// /sys/module/nvidia_peermem/version and MLNX_OFED's nv_mem(_nc) peers (the
// places NCCL probes).
const std::vector<std::string>& PeermemMarkers();

// /etc/modules and every *.conf of the modules-load.d directories.
std::vector<std::string> ModuleListFiles(const FsRoot& fs);

// "nvidia-peermem", "nvidia_peermem" or "nv_peer_mem".
bool NamesPeermem(absl::string_view word);

}  // namespace gdrbench::agent::preflight
