#include "server/web/blame_subject.h"

#include <charconv>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::web {
namespace {

// "X rail N" -> X and N; nullopt when the text does not end so.
std::optional<std::pair<std::string, uint32_t>> SplitRail(const std::string& s) {
  const size_t at = s.rfind(" rail ");
  if (at == std::string::npos) return std::nullopt;
  const std::string digits = s.substr(at + 6);
  uint32_t rail = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rail);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return std::make_pair(s.substr(0, at), rail);
}

std::optional<BlameSubject> Link(const std::string& text, const std::set<std::string>& names) {
  // Try every "->" / "<->" split: the one whose both sides are node names.
  for (size_t at = text.find("->"); at != std::string::npos; at = text.find("->", at + 1)) {
    const bool both = at > 0 && text[at - 1] == '<';
    const std::string src = text.substr(0, both ? at - 1 : at);
    const std::string dst = text.substr(at + 2);
    if (names.count(src) && names.count(dst)) {
      BlameSubject b;
      b.nodes = {src, dst};
      b.both_directions = both;
      return b;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<BlameSubject> ParseBlameSubject(const v1::Blame& blame, const std::set<std::string>& names) {
  const std::string& s = blame.subject();
  if (blame.kind() == "node") {
    if (!names.count(s)) return std::nullopt;
    return BlameSubject{{s}, std::nullopt, false};
  }
  if (blame.kind() == "nic") {
    auto r = SplitRail(s);
    if (!r || !names.count(r->first)) return std::nullopt;
    return BlameSubject{{r->first}, r->second, false};
  }
  if (blame.kind() == "rail") {
    auto r = SplitRail(absl::StrCat(" ", s));
    if (!r) return std::nullopt;
    return BlameSubject{{}, r->second, false};
  }
  if (blame.kind() == "link") {
    if (auto whole = Link(s, names)) return whole;
    auto r = SplitRail(s);
    if (!r) return std::nullopt;
    auto link = Link(r->first, names);
    if (link) link->rail = r->second;
    return link;
  }
  return std::nullopt;
}

}  // namespace gdrbench::server::web
