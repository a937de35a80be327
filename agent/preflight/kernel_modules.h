// Kernel modules as the checks see them, through an FsRoot:
//   - loaded: /sys/module/<name> with an initstate (or a /proc/modules line);
//   - taint: /sys/module/<name>/taint, the module's taint letters, else its
//     /proc/modules line, whose last field is "(LETTERS)" when the module has
//     any taint and absent when it has none (kernel/module/main.c,
//     module_flags(); e.g. "nvidia 14299136 - - Live 0xffffffffc0400000 (O)"
//     on the lent H200), and /proc/sys/kernel/tainted, the kernel's bitmask
//     (Documentation/admin-guide/tainted-kernels.rst: bit 0 P proprietary
//     module, bit 12 O out-of-tree module, bit 13 E unsigned module);
//   - installed: the module's file for the running kernel as modprobe and
//     modinfo find it, through /lib/modules/<release>/modules.dep (depmod(8):
//     one "path: dependencies" line per module, paths relative to that
//     directory, ".ko" possibly followed by ".xz"/".zst"/".gz");
//   - signed: a module signature ends the file with the marker
//     "~Module signature appended~\n" (include/linux/module_signature.h,
//     MODULE_SIG_STRING); only uncompressed .ko files can be told.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

inline constexpr uint64_t kTaintUnsignedModule = uint64_t{1} << 13;  // 'E'

// Loaded when /sys/module/<name>/initstate or .../version exists, or
// /proc/modules lists it. `name` with underscores ("nvidia_peermem").
bool ModuleLoaded(const FsRoot& fs, const std::string& name);

// A loaded module's taint letters and where they were read.
struct ModuleTaintReading {
  std::optional<std::string> letters;  // "POE", "" (no taint); nullopt: unknown
  std::string source;                  // "/sys/module/nvidia/taint" or "/proc/modules"
  std::string observed;                // the letters, "(none)", or why it is unknown
};

// The taint letters of a loaded module: /sys/module/<name>/taint, else its
// /proc/modules line; unknown (letters nullopt) when neither can be read or
// /proc/modules does not list it.
ModuleTaintReading ReadModuleTaint(const FsRoot& fs, const std::string& name);

// /proc/sys/kernel/tainted; nullopt when not readable.
std::optional<uint64_t> KernelTaint(const FsRoot& fs);

struct ModuleFile {
  std::string release;   // "6.8.0-60-generic" (/proc/sys/kernel/osrelease)
  std::string dep_file;  // "/lib/modules/<release>/modules.dep"
  bool dep_readable = false;
  std::string path;      // "/lib/modules/<release>/updates/dkms/nvidia-peermem.ko"; "" when not installed
};

// Finds `file_stem` ("nvidia-peermem"; depmod lists file names with '-' or
// '_' as built) for the running kernel.
ModuleFile FindModuleFile(const FsRoot& fs, const std::string& file_stem);

// Whether the module file at `path` carries a signature: true/false for an
// uncompressed .ko, nullopt when it cannot be told (compressed, unreadable).
std::optional<bool> ModuleFileSigned(const FsRoot& fs, const std::string& path);

}  // namespace gdrbench::agent::preflight
