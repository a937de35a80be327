#include "agent/preflight/nvidia_version.h"

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gdrbench::agent::preflight {

NvidiaVersion ParseNvidiaVersion(const std::string& text) {
  NvidiaVersion v;
  v.present = true;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(l, "NVRM version:")) {
      v.line = std::string(absl::StripAsciiWhitespace(l));
      break;
    }
  }
  // The release follows "Kernel Module" (and "for <arch>" on the open modules).
  static const std::regex kVersion(R"(Kernel Module(?: for [a-z0-9_]+)?\s+([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  if (std::regex_search(text, m, kVersion)) v.version = m[1];
  v.open = absl::StrContains(v.line, "Open Kernel Module");
  return v;
}

NvidiaVersion ReadNvidiaVersion(const FsRoot& fs) {
  auto content = fs.ReadFile("/proc/driver/nvidia/version");
  if (!content.ok()) return NvidiaVersion{};
  return ParseNvidiaVersion(*content);
}

}  // namespace gdrbench::agent::preflight
