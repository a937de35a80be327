#include "agent/preflight/secure_boot_state.h"

#include "absl/strings/str_cat.h"

namespace gdrbench::agent::preflight {
namespace {

EfiByteVariable ReadByteVariable(const FsRoot& fs, const std::string& name) {
  EfiByteVariable v;
  v.path = absl::StrCat("/sys/firmware/efi/efivars/", name, "-", kEfiGlobalVariableGuid);
  auto content = fs.ReadFile(v.path);
  if (!content.ok()) {
    v.problem = "absent";
    return v;
  }
  if (content->size() < 5) {
    v.problem = absl::StrCat(content->size(), " bytes: shorter than 4 attribute bytes + 1 value byte");
    return v;
  }
  v.value = static_cast<unsigned char>((*content)[4]);
  return v;
}

}  // namespace

std::string CurrentLockdown(const std::string& text) {
  size_t open = text.find('[');
  size_t close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return text.substr(open + 1, close - open - 1);
}

SecureBootState ReadSecureBoot(const FsRoot& fs) {
  SecureBootState s;
  s.uefi = fs.Exists("/sys/firmware/efi");
  if (s.uefi) {
    s.secure_boot = ReadByteVariable(fs, "SecureBoot");
    s.setup_mode = ReadByteVariable(fs, "SetupMode");
  }
  if (auto l = fs.ReadLine("/sys/kernel/security/lockdown"); l.ok()) s.lockdown = CurrentLockdown(*l);
  return s;
}

}  // namespace gdrbench::agent::preflight
