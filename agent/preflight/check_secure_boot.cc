// secure_boot: with UEFI Secure Boot on, the kernel refuses unsigned modules
// (DKMS-built nvidia, nvidia-peermem, OFED) unless their key is enrolled.
#include "absl/strings/str_cat.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckSecureBoot(Context& ctx) {
  const char* kId = "secure_boot";
  const std::string var =
      "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0f9ae1d1a2d";
  if (!ctx.fs().Exists("/sys/firmware/efi")) {
    return Result(kId, Status::kPass, "legacy BIOS boot: no Secure Boot")
        .Saw(ctx.Where("/sys/firmware/efi"), "absent");
  }
  auto content = ctx.fs().ReadFile(var);
  if (!content.ok()) {
    return Result(kId, Status::kPass, "UEFI boot without a SecureBoot variable: Secure Boot off")
        .Saw(ctx.Where(var), std::string(content.status().message()));
  }
  // efivarfs: 4 bytes of attributes, then the value (1 byte).
  if (content->size() < 5) {
    return Result(kId, Status::kWarn, "the SecureBoot EFI variable is malformed",
                  "check with mokutil --sb-state")
        .Saw(ctx.Where(var), absl::StrCat(content->size(), " bytes"));
  }
  bool on = (*content)[4] != 0;
  CheckResult r;
  r.id = kId;
  r.Saw(ctx.Where(var), on ? "1 (enabled)" : "0 (disabled)");
  if (!on) {
    r.status = Status::kPass;
    r.summary = "Secure Boot is off";
    return r;
  }
  bool gpu = HasNvidiaGpu(ctx);
  bool nvidia = ctx.ModuleLoaded("nvidia");
  r.Saw(ctx.Where("/sys/module/nvidia"), nvidia ? "loaded" : "not loaded");
  const char* kMok =
      "sign the NVIDIA, nvidia-peermem and OFED modules with a Machine Owner Key and enroll it "
      "(mokutil --import <key.der>, confirm at the next boot; DKMS signs with "
      "/var/lib/dkms/mok.pub), or disable Secure Boot in the firmware setup";
  if (gpu && !nvidia) {
    r.status = Status::kFail;
    r.summary = "Secure Boot is on and the NVIDIA module is not loaded: the kernel likely rejected it as unsigned";
    r.remediation = absl::StrCat("dmesg | grep -i 'module verification failed\\|Key was rejected'; ", kMok);
    return r;
  }
  r.status = Status::kWarn;
  r.summary = "Secure Boot is on: every driver or OFED update must ship signed modules, or they will not load";
  r.remediation = kMok;
  return r;
}

}  // namespace gdrbench::agent::preflight
