// The NVIDIA kernel module's own statement of itself, /proc/driver/nvidia/version:
//   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Thu Sep ..."
//   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build ..."
// parsed in one place for the preflight checks and GetNodeInfo.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

struct NvidiaVersion {
  bool present = false;   // the file exists (the nvidia module is loaded)
  std::string version;    // "580.95.05"; empty when absent or unparseable
  bool open = false;      // "Open Kernel Module": NVIDIA's open GPU kernel modules
  std::string line;       // the NVRM line as read, for evidence
};

// Parses the text of /proc/driver/nvidia/version.
NvidiaVersion ParseNvidiaVersion(const std::string& text);
// Reads and parses it under `fs`; present=false when the file is absent.
NvidiaVersion ReadNvidiaVersion(const FsRoot& fs);

}  // namespace gdrbench::agent::preflight
