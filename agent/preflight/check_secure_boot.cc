// secure_boot: with UEFI Secure Boot on, the kernel refuses unsigned modules
// (DKMS-built nvidia, nvidia-peermem, OFED) unless their key is enrolled in
// the Machine Owner Key list. Reads SecureBoot and SetupMode from efivarfs
// (secure_boot_state.h), the lockdown level, and, when Secure Boot is on,
// whether the loaded NVIDIA modules are signed (their 'E' taint, bit 13 of
// /proc/sys/kernel/tainted: "unsigned module was loaded"), read from
// /sys/module/<m>/taint or, where that is absent (a partial capture), the
// module's /proc/modules line. A module whose taint cannot be read leaves the
// question open: WARN, never PASS.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"
#include "agent/preflight/kernel_modules.h"
#include "agent/preflight/secure_boot_state.h"

namespace gdrbench::agent::preflight {
namespace {

std::string Describe(const EfiByteVariable& v) {
  if (!v.value) return v.problem;
  return absl::StrCat(*v.value, *v.value == 1 ? " (enabled)" : *v.value == 0 ? " (disabled)" : " (unknown)");
}

}  // namespace

CheckResult CheckSecureBoot(Context& ctx) {
  const char* kId = "secure_boot";
  SecureBootState sb = ReadSecureBoot(ctx.fs());
  if (!sb.uefi) {
    return Result(kId, Status::kPass, "legacy BIOS boot: no Secure Boot")
        .Saw(ctx.Where("/sys/firmware/efi"), "absent");
  }
  CheckResult r;
  r.id = kId;
  r.Saw(ctx.Where(sb.secure_boot.path), Describe(sb.secure_boot));
  r.Saw(ctx.Where(sb.setup_mode.path), Describe(sb.setup_mode));
  if (!sb.lockdown.empty()) r.Saw(ctx.Where("/sys/kernel/security/lockdown"), sb.lockdown);
  if (!sb.secure_boot.value) {
    if (sb.secure_boot.problem == "absent") {
      r.status = Status::kPass;
      r.summary = "UEFI boot without a SecureBoot variable: Secure Boot off";
      return r;
    }
    r.status = Status::kWarn;
    r.summary = "the SecureBoot EFI variable is malformed";
    r.remediation = "check with mokutil --sb-state";
    return r;
  }
  if (!sb.on()) {
    r.status = Status::kPass;
    r.summary = sb.setup_mode.value.value_or(0) == 1 ? "Secure Boot is off (firmware in setup mode: no Platform Key)"
                                                     : "Secure Boot is off";
    return r;
  }
  // Secure Boot on: which NVIDIA modules are loaded, and are they signed?
  std::vector<std::string> unsigned_loaded, unknown;
  for (const char* m : {"nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem"}) {
    if (!ctx.ModuleLoaded(m)) continue;
    ModuleTaintReading taint = ReadModuleTaint(ctx.fs(), m);
    r.Saw(ctx.Where(taint.source), taint.observed);
    if (!taint.letters) {
      unknown.push_back(m);
    } else if (absl::StrContains(*taint.letters, "E")) {
      unsigned_loaded.push_back(m);
    }
  }
  if (auto t = KernelTaint(ctx.fs())) {
    r.Saw(ctx.Where("/proc/sys/kernel/tainted"),
          absl::StrCat(*t, (*t & kTaintUnsignedModule) ? " (bit 13 E: an unsigned module was loaded)" : ""));
  }
  bool gpu = HasNvidiaGpu(ctx);
  if (gpu && !ctx.ModuleLoaded("nvidia")) {
    r.status = Status::kFail;
    r.summary = "Secure Boot is on and the NVIDIA module is not loaded: the kernel likely rejected it as unsigned";
    r.remediation = absl::StrCat("dmesg | grep -i 'module verification failed\\|Key was rejected\\|Lockdown'; ", kMokRemedy);
    return r;
  }
  if (!unsigned_loaded.empty()) {
    r.status = Status::kFail;
    r.summary = absl::StrCat("Secure Boot is on and unsigned modules are loaded (",
                             absl::StrJoin(unsigned_loaded, ", "), ": taint E): signatures are not "
                             "enforced now (lockdown ", sb.lockdown.empty() ? "?" : sb.lockdown,
                             "), and an enforcing kernel will refuse them");
    r.remediation = kMokRemedy;
    return r;
  }
  if (!unknown.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("Secure Boot is on; cannot tell whether the modules are signed: the taint of ",
                             absl::StrJoin(unknown, ", "), " is not readable");
    r.remediation = "read it on the node: cat /sys/module/nvidia/taint (an E means unsigned), or "
                    "modinfo -F signer nvidia";
    return r;
  }
  r.status = Status::kPass;
  r.summary = absl::StrCat("Secure Boot is on; the loaded NVIDIA modules are signed",
                           sb.lockdown.empty() ? "" : absl::StrCat(" (lockdown ", sb.lockdown, ")"),
                           ": keep the MOK enrolled when updating drivers");
  return r;
}

}  // namespace gdrbench::agent::preflight
