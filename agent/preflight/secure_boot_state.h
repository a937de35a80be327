// UEFI Secure Boot as the kernel exposes it, read through an FsRoot.
//
// efivarfs (/sys/firmware/efi/efivars/<Name>-<VendorGuid>) prints a variable
// as its 32-bit attributes (little-endian on x86 and arm64) followed by the
// value (fs/efivarfs/file.c, efivarfs_file_read). SecureBoot and SetupMode
// are one-byte globally defined variables of the EFI_GLOBAL_VARIABLE vendor,
// 8be4df61-93ca-11d2-aa0d-00e098032b8c (UEFI specification, "Globally
// Defined Variables"; include/linux/efi.h EFI_GLOBAL_VARIABLE_GUID; what
// mokutil --sb-state reads): SecureBoot 1 = signature verification enforced,
// SetupMode 1 = no Platform Key enrolled.
// The kernel's lockdown state is /sys/kernel/security/lockdown, the levels
// with the current one in brackets: "none [integrity] confidentiality"
// (security/lockdown/lockdown.c).
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

inline constexpr char kEfiGlobalVariableGuid[] = "8be4df61-93ca-11d2-aa0d-00e098032b8c";

struct EfiByteVariable {
  std::string path;              // "/sys/firmware/efi/efivars/SecureBoot-8be4df61-..."
  std::optional<int> value;      // the value byte; nullopt when absent or malformed
  std::string problem;           // "absent", "3 bytes: shorter than attributes + value"
};

struct SecureBootState {
  bool uefi = false;             // /sys/firmware/efi exists
  EfiByteVariable secure_boot;
  EfiByteVariable setup_mode;
  std::string lockdown;          // "integrity", "none", ... ; "" when the file is absent
  bool on() const { return secure_boot.value.value_or(0) == 1; }
};

SecureBootState ReadSecureBoot(const FsRoot& fs);

// "none [integrity] confidentiality" -> "integrity"; "" when no level is bracketed.
std::string CurrentLockdown(const std::string& text);

}  // namespace gdrbench::agent::preflight
