#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {
namespace {

constexpr char kForms[] =
    "expected host, hugepage, gpu:<index>, gpu:<PCI BDF>, gpu-staged:<index> or "
    "gpu-staged:<PCI BDF> (e.g. gpu:0, gpu:0000:17:00.0)";

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// "17:00.0" or "0000:17:00.0" (hex domain, bus, device; function 0-7).
bool IsBdf(absl::string_view s) {
  if (s.size() == 7) return IsBdf(absl::StrCat("0000:", s));
  if (s.size() != 12) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 4 || i == 7) {
      if (c != ':') return false;
    } else if (i == 10) {
      if (c != '.') return false;
    } else if (i == 11) {
      if (c < '0' || c > '7') return false;
    } else if (!IsHex(c)) {
      return false;
    }
  }
  return true;
}

bool IsIndex(absl::string_view s) {
  if (s.empty() || s.size() > 4) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<MemorySpec> MemorySpec::Parse(absl::string_view text) {
  std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  MemorySpec spec;
  if (t == "host") return spec;
  if (t == "hugepage") {
    spec.kind = Kind::kHugepage;
    return spec;
  }
  absl::string_view rest = t;
  if (absl::ConsumePrefix(&rest, "gpu-staged:")) {
    spec.kind = Kind::kGpuStaged;
  } else if (absl::ConsumePrefix(&rest, "gpu:")) {
    spec.kind = Kind::kGpu;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("memory \"", text, "\" is not a memory kind: ", kForms));
  }
  if (IsIndex(rest)) {
    spec.gpu = std::string(rest);
  } else if (IsBdf(rest)) {
    spec.gpu = rest.size() == 7 ? absl::StrCat("0000:", rest) : std::string(rest);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory \"", text, "\": \"", rest, "\" is neither a GPU index nor a PCI BDF: ", kForms));
  }
  return spec;
}

std::string MemorySpec::ToString() const {
  switch (kind) {
    case Kind::kHost: return "host";
    case Kind::kHugepage: return "hugepage";
    case Kind::kGpu: return absl::StrCat("gpu:", gpu);
    case Kind::kGpuStaged: return absl::StrCat("gpu-staged:", gpu);
  }
  return "unknown";
}

}  // namespace gdrbench::agent::memory
