// peermem_persistent: something loads nvidia-peermem at boot
// (systemd-modules-load or /etc/modules); loaded-but-not-persisted breaks at
// the next reboot.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/checks.h"
#include "agent/preflight/peermem.h"

namespace gdrbench::agent::preflight {

CheckResult CheckPeermemPersistent(Context& ctx) {
  const char* kId = "peermem_persistent";
  bool loaded = false;
  for (const auto& m : PeermemMarkers()) loaded = loaded || ctx.fs().Exists(m);
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
