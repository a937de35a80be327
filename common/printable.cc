#include "common/printable.h"

#include "absl/strings/str_format.h"

namespace gdrbench {
namespace {
bool Control(unsigned char c) { return c < 0x20 || c == 0x7f; }
}  // namespace

std::string Printable(absl::string_view text, size_t max_bytes) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    if (Control(c)) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool IsPrintable(absl::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return false;
  for (unsigned char c : text) {
    if (Control(c)) return false;
  }
  return true;
}

}  // namespace gdrbench
