#include "server/history/names.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::history {
namespace {

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

absl::string_view Head(absl::string_view s) { return s.substr(0, 40); }

}  // namespace

bool IdChars(absl::string_view s, size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == ':';
  });
}

bool Printable(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
}

bool ValidNodeName(absl::string_view n) { return !n.empty() && n.size() <= kMaxNodeNameChars && Printable(n); }

absl::Status CheckRunId(absl::string_view id, absl::string_view field) {
  if (id.empty()) return Bad(absl::StrCat(field, " is required (a run id)"));
  if (!IdChars(id, kMaxRunIdChars)) {
    return Bad(absl::StrCat(field, " '", Head(id), "' is not a run id (1 to ", kMaxRunIdChars,
                            " of A-Z a-z 0-9 - _ . :)"));
  }
  return absl::OkStatus();
}

absl::Status CheckClusterName(absl::string_view c, absl::string_view field, bool required) {
  if (c.empty()) return required ? Bad(absl::StrCat(field, " is required (a cluster name)")) : absl::OkStatus();
  if (!IdChars(c, kMaxClusterChars)) {
    return Bad(absl::StrCat(field, " '", Head(c), "' is not a cluster name (1 to ", kMaxClusterChars,
                            " of A-Z a-z 0-9 - _ . :)"));
  }
  return absl::OkStatus();
}

absl::Status CheckNodeName(absl::string_view n, absl::string_view where) {
  if (!ValidNodeName(n)) {
    return Bad(absl::StrCat(where, ": node name '", n.substr(0, 64), "' must be 1 to ", kMaxNodeNameChars,
                            " printable characters"));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::history
