// peermem_loaded and peermem_persistent: the nvidia-peermem kernel module
// (or MLNX_OFED's older nv_peer_mem) that lets ibv_reg_mr pin GPU memory.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

// The sysfs places that say a peer-memory client for NVIDIA GPUs is loaded
// (the same places NCCL probes).
const char* kPeermemMarkers[] = {
    "/sys/module/nvidia_peermem/version",
    "/sys/kernel/mm/memory_peers/nv_mem/version",
    "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
};

// Where systemd-modules-load and Debian's /etc/modules read module names.
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

}  // namespace

CheckResult CheckPeermemLoaded(Context& ctx) {
  const char* kId = "peermem_loaded";
  for (const char* m : kPeermemMarkers) {
    if (auto v = ctx.fs().ReadLine(m); v.ok() || ctx.fs().Exists(m)) {
      return Result(kId, Status::kPass,
                    absl::StrCat("GPU peer-memory client loaded", v.ok() ? " (version " + *v + ")" : ""))
          .Saw(ctx.Where(m), v.ok() ? *v : "present");
    }
  }
  if (ctx.ModuleLoaded("nvidia_peermem")) {
    return Result(kId, Status::kPass, "nvidia_peermem loaded")
        .Saw(ctx.Where("/sys/module/nvidia_peermem"), "present");
  }
  if (!HasNvidiaGpu(ctx)) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  }
  CheckResult r = Result(
      kId, Status::kFail,
      "nvidia-peermem is not loaded: ibv_reg_mr on GPU memory will fail (only dma-buf can work)",
      "modprobe nvidia-peermem (ships with the NVIDIA driver >= 470; load it after the RDMA "
      "stack: after openibd restart with MLNX_OFED), then check /sys/module/nvidia_peermem");
  for (const char* m : kPeermemMarkers) r.Saw(ctx.Where(m), "absent");
  return r;
}

CheckResult CheckPeermemPersistent(Context& ctx) {
  const char* kId = "peermem_persistent";
  bool loaded = false;
  for (const char* m : kPeermemMarkers) loaded = loaded || ctx.fs().Exists(m);
  loaded = loaded || ctx.ModuleLoaded("nvidia_peermem");
  CheckResult r;
  r.id = kId;
  std::string found_in;
  for (const auto& file : ModuleListFiles(ctx.fs())) {
    auto content = ctx.fs().ReadFile(file);
    if (!content.ok()) continue;
    for (absl::string_view line : absl::StrSplit(*content, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (line.empty() || line[0] == '#' || line[0] == ';') continue;
      std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (!words.empty() && NamesPeermem(words[0])) found_in = file;
    }
    r.Saw(ctx.Where(file), found_in == file ? "lists nvidia-peermem" : "does not list it");
    if (!found_in.empty()) break;
  }
  if (!found_in.empty()) {
    r.status = Status::kPass;
    r.summary = absl::StrCat("nvidia-peermem is loaded at boot (", found_in, ")");
    return r;
  }
  if (!HasNvidiaGpu(ctx) && !loaded) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  }
  const char* fix =
      "echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf (systemd-modules-load "
      "loads it at every boot)";
  if (loaded) {
    r.status = Status::kWarn;
    r.summary = "nvidia-peermem is loaded now but nothing loads it at boot: GPUDirect breaks after the next reboot";
  } else {
    r.status = Status::kFail;
    r.summary = "nvidia-peermem is neither loaded nor configured to load at boot";
  }
  r.remediation = fix;
  return r;
}

}  // namespace gdrbench::agent::preflight
