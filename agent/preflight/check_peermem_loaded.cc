// peermem_loaded: the nvidia-peermem kernel module (or MLNX_OFED's older
// nv_peer_mem) that lets ibv_reg_mr pin GPU memory is loaded. When it is
// not, the remedy depends on why:
//   - Secure Boot is on: an unsigned module is refused, so the fix is
//     signing (MOK enrolment), not modprobe;
//   - no nvidia-peermem.ko for the running kernel (modules.dep, as modprobe
//     and modinfo find it): reinstall the driver built for this kernel;
//   - installed, not loaded: modprobe.
#include "absl/strings/str_cat.h"
#include "agent/preflight/checks.h"
#include "agent/preflight/kernel_modules.h"
#include "agent/preflight/peermem.h"
#include "agent/preflight/secure_boot_state.h"

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
  CheckResult r;
  r.id = kId;
  r.status = Status::kFail;
  for (const auto& m : PeermemMarkers()) r.Saw(ctx.Where(m), "absent");
  ModuleFile file = FindModuleFile(ctx.fs(), "nvidia-peermem");
  if (file.dep_readable) {
    r.Saw(ctx.Where(file.dep_file), file.path.empty() ? "no nvidia-peermem.ko*" : file.path);
  } else if (!file.release.empty()) {
    r.Saw(ctx.Where(absl::StrCat("/lib/modules/", file.release, "/modules.dep")), "not readable");
  }
  std::optional<bool> signed_file;
  if (!file.path.empty()) {
    signed_file = ModuleFileSigned(ctx.fs(), file.path);
    if (signed_file) {
      r.Saw(ctx.Where(file.path), *signed_file ? "signed (~Module signature appended~)" : "no module signature");
    }
  }
  SecureBootState sb = ReadSecureBoot(ctx.fs());
  const char* kNoPeermem = "ibv_reg_mr on GPU memory will fail (only dma-buf can work)";
  if (sb.on()) {
    r.Saw(ctx.Where(sb.secure_boot.path), "1 (Secure Boot enabled)");
    r.summary = absl::StrCat("nvidia-peermem is not loaded and Secure Boot is on",
                             signed_file == false ? " (its module file is unsigned)" : "",
                             ": the kernel refuses unsigned modules, so modprobe alone fails; ", kNoPeermem);
    r.remediation = absl::StrCat(kMokRemedy, "; then modprobe nvidia-peermem");
    return r;
  }
  if (file.dep_readable && file.path.empty()) {
    r.summary = absl::StrCat("nvidia-peermem is not installed for kernel ", file.release, ": ", kNoPeermem);
    r.remediation = absl::StrCat(
        "reinstall the NVIDIA driver built for this kernel's headers (apt install linux-headers-",
        file.release, " and reinstall the driver or its DKMS package, e.g. nvidia-dkms-<ver>-open, "
        "or the prebuilt linux-modules-nvidia-<ver>-", file.release,
        "; install MLNX_OFED/DOCA first if used), then modprobe nvidia-peermem");
    return r;
  }
  r.summary = absl::StrCat("nvidia-peermem is ", file.path.empty() ? "not loaded" : "installed but not loaded",
                           ": ", kNoPeermem);
  r.remediation =
      "modprobe nvidia-peermem (ships with the NVIDIA driver >= 470; load it after the RDMA "
      "stack: after openibd restart with MLNX_OFED), then check /sys/module/nvidia_peermem; "
      "if modprobe says it is not found, reinstall the driver for this kernel";
  return r;
}

}  // namespace gdrbench::agent::preflight
