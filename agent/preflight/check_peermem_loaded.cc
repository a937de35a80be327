// peermem_loaded: the nvidia-peermem kernel module (or MLNX_OFED's older
// nv_peer_mem) that lets ibv_reg_mr pin GPU memory is loaded.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/checks.h"
#include "agent/preflight/peermem.h"

namespace gdrbench::agent::preflight {

CheckResult CheckPeermemLoaded(Context& ctx) {
  const char* kId = "peermem_loaded";
  for (const auto& m : PeermemMarkers()) {
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
  for (const auto& m : PeermemMarkers()) r.Saw(ctx.Where(m), "absent");
  return r;
}

}  // namespace gdrbench::agent::preflight
