#include "controller/inventory/yaml_fields.h"

#include <charconv>
#include <regex>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::inventory {

absl::Status Ctx::Error(const YAML::Node& at, absl::string_view field, absl::string_view why) const {
  int line = at.IsDefined() ? at.Mark().line + 1 : 0;
  if (line > 0) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ":", line, ": ", field, ": ", why));
  }
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", field, ": ", why));
}

std::string Ctx::Where(const YAML::Node& at) const {
  int line = at.IsDefined() ? at.Mark().line + 1 : 0;
  return line > 0 ? absl::StrCat(source_, ":", line) : source_;
}

std::string Shown(const YAML::Node& n) {
  if (n.IsScalar()) return absl::StrCat("'", n.Scalar(), "'");
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

absl::Status CheckKeys(const Ctx& ctx, const YAML::Node& map, absl::string_view field,
                       const std::set<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) absl::StrAppend(&list, list.empty() ? "" : ", ", a);
  if (!map.IsMap()) {
    return ctx.Error(map, field.empty() ? "inventory" : field,
                     absl::StrCat("expected a mapping with keys ", list, ", got ", Shown(map)));
  }
  for (const auto& kv : map) {
    std::string key = kv.first.as<std::string>("");
    if (!allowed.count(key)) {
      return ctx.Error(kv.first, field.empty() ? key : absl::StrCat(field, ".", key),
                       absl::StrCat("unknown key (allowed: ", list, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GetString(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  if (!n.IsScalar() || n.Scalar().empty()) {
    return ctx.Error(n, field, absl::StrCat("expected a non-empty string, got ", Shown(n)));
  }
  return n.Scalar();
}

// A version string. A plain (unquoted) scalar that YAML's core schema
// resolves to a float, or to an integer whose text another reader would
// change (YAML 1.2.2, 10.3.2 "Tag Resolution": [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)
// ([eE][-+]?[0-9]+)? is a float, 0o.. and 0x.. are integers), is refused with
// the quoting hint: this parser keeps the text, but `cuda_driver: 13.10` is
// the number 13.1 to every tool that reads YAML by its schema, and 13.0 is 13.
absl::StatusOr<std::string> GetVersion(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  GDR_ASSIGN_OR_RETURN(std::string v, GetString(ctx, n, field));
  if (n.Tag() != "?") return v;  // quoted, or tagged !!str
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  static const std::regex kInt(R"([-+]?[0-9]+)");
  const bool lossy_int = std::regex_match(v, kInt) && v.size() > 1 && (v[0] == '0' || v[0] == '+');
  const bool other_base = v.size() > 2 && v[0] == '0' && (v[1] == 'o' || v[1] == 'x');
  if ((std::regex_match(v, kFloat) && !std::regex_match(v, kInt)) || lossy_int || other_base) {
    return ctx.Error(n, field,
                     absl::StrCat("unquoted ", v, " is a number in YAML, not a version (13.10 reads as 13.1, "
                                  "13.0 as 13): quote it, ", field.substr(field.rfind('.') + 1), ": \"", v, "\""));
  }
  return v;
}

absl::StatusOr<uint64_t> GetUint(const Ctx& ctx, const YAML::Node& n, absl::string_view field,
                                 uint64_t max) {
  std::string s = n.IsScalar() ? n.Scalar() : "";
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > max) {
    return ctx.Error(n, field, absl::StrCat("expected an integer in 0..", max, ", got ", Shown(n)));
  }
  return v;
}

absl::StatusOr<double> GetRate(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  std::string s = n.IsScalar() ? n.Scalar() : "";
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !(v >= 0) || v > 1e6) {
    return ctx.Error(n, field, absl::StrCat("expected a rate in Gb/s (0..1e6), got ", Shown(n)));
  }
  return v;
}

absl::StatusOr<bool> GetBool(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == "true") return true;
  if (s == "false") return false;
  return ctx.Error(n, field, absl::StrCat("expected true or false, got ", Shown(n)));
}

}  // namespace gdrbench::controller::inventory
