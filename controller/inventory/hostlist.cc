#include "controller/inventory/hostlist.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace gdrbench::controller::inventory {
namespace {

absl::Status Bad(absl::string_view expr, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("hostlist \"", expr, "\": ", why));
}

bool ParseDecimal(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The values of one bracket body "01-03,7" as zero-padded strings.
absl::StatusOr<std::vector<std::string>> ExpandBracket(absl::string_view expr,
                                                       absl::string_view body, size_t max_hosts) {
  std::vector<std::string> out;
  if (body.empty()) return Bad(expr, "empty brackets []");
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    if (part.empty()) return Bad(expr, "empty element in brackets");
    size_t dash = part.find('-');
    absl::string_view lo_s = part.substr(0, dash);
    absl::string_view hi_s = dash == absl::string_view::npos ? part : part.substr(dash + 1);
    uint64_t lo = 0, hi = 0;
    if (!ParseDecimal(lo_s, &lo) || !ParseDecimal(hi_s, &hi)) {
      return Bad(expr, absl::StrCat("\"", part, "\" is not a decimal number or range"));
    }
    if (lo > hi) return Bad(expr, absl::StrCat("range \"", part, "\" runs backwards"));
    if (hi - lo >= max_hosts) return Bad(expr, absl::StrCat("more than ", max_hosts, " hosts"));
    size_t width = lo_s.size();
    for (uint64_t v = lo; v <= hi; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out.push_back(std::move(s));
      if (out.size() > max_hosts) return Bad(expr, absl::StrCat("more than ", max_hosts, " hosts"));
    }
  }
  return out;
}

absl::Status ExpandOne(absl::string_view full, absl::string_view element, size_t max_hosts,
                       std::vector<std::string>* out) {
  if (element.empty()) return Bad(full, "empty element");
  std::vector<std::string> acc = {""};
  size_t i = 0;
  while (i < element.size()) {
    size_t open = element.find('[', i);
    size_t close_early = element.find(']', i);
    if (close_early != absl::string_view::npos &&
        (open == absl::string_view::npos || close_early < open)) {
      return Bad(full, "']' without '['");
    }
    absl::string_view literal = element.substr(i, open == absl::string_view::npos
                                                      ? absl::string_view::npos
                                                      : open - i);
    for (auto& a : acc) absl::StrAppend(&a, literal);
    if (open == absl::string_view::npos) break;
    size_t close = element.find(']', open);
    if (close == absl::string_view::npos) return Bad(full, "'[' without ']'");
    absl::string_view body = element.substr(open + 1, close - open - 1);
    if (body.find('[') != absl::string_view::npos) return Bad(full, "nested brackets");
    GDR_ASSIGN_OR_RETURN(std::vector<std::string> values, ExpandBracket(full, body, max_hosts));
    if (acc.size() * values.size() > max_hosts) {
      return Bad(full, absl::StrCat("more than ", max_hosts, " hosts"));
    }
    std::vector<std::string> next;
    next.reserve(acc.size() * values.size());
    for (const auto& a : acc) {
      for (const auto& v : values) next.push_back(absl::StrCat(a, v));
    }
    acc = std::move(next);
    i = close + 1;
  }
  for (auto& a : acc) {
    if (out->size() >= max_hosts) return Bad(full, absl::StrCat("more than ", max_hosts, " hosts"));
    out->push_back(std::move(a));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> SplitTopLevel(absl::string_view expression) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : expression) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(std::move(cur));
  return parts;
}

absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expression,
                                                        size_t max_hosts) {
  if (expression.empty()) return Bad(expression, "empty expression");
  std::vector<std::string> out;
  for (const std::string& element : SplitTopLevel(expression)) {
    GDR_RETURN_IF_ERROR(ExpandOne(expression, element, max_hosts, &out));
  }
  return out;
}

}  // namespace gdrbench::controller::inventory
