// nvidia_driver: the NVIDIA kernel module is loaded, read from
// /proc/driver/nvidia/version.
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckNvidiaDriver(Context& ctx) {
  const char* kId = "nvidia_driver";
  const std::string path = "/proc/driver/nvidia/version";
  const NvidiaVersion& nv = ctx.Nvidia();
  if (!nv.version.empty()) {
    return Result(kId, Status::kPass,
                  absl::StrCat("NVIDIA driver ", nv.version, nv.open ? " (open kernel modules)" : ""))
        .Saw(ctx.Where(path), nv.line.empty() ? nv.version : nv.line);
  }
  if (!HasNvidiaGpu(ctx)) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus and no NVIDIA driver")
        .Saw(ctx.Where(path), "absent");
  }
  CheckResult r = Result(
      kId, Status::kFail, "an NVIDIA GPU is present but the NVIDIA kernel driver is not loaded",
      "install the NVIDIA driver (e.g. apt install nvidia-driver-<ver>-open / the CUDA repo's "
      "cuda-drivers) and load it: modprobe nvidia; check dmesg for 'NVRM' errors and Secure Boot");
  r.Saw(ctx.Where(path), nv.present ? "unparseable" : "absent");
  r.Saw(ctx.Where("/sys/module/nvidia"), ctx.ModuleLoaded("nvidia") ? "loaded" : "not loaded");
  return r;
}

}  // namespace gdrbench::agent::preflight
