// ParsePairList: a --pairs file ("SRC DST" or "SRC -> DST" per line, '#'
// comments) read against the inventory's node names.
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

absl::StatusOr<std::vector<std::pair<uint32_t, uint32_t>>> ParsePairList(
    absl::string_view text, absl::string_view source, const std::vector<std::string>& names) {
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < names.size(); ++i) index.emplace(names[i], i);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    absl::string_view line =
        text.substr(pos, nl == absl::string_view::npos ? absl::string_view::npos : nl - pos);
    pos = nl == absl::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    std::string l = absl::StrReplaceAll(line, {{"->", " "}});
    std::vector<std::string> words;
    std::string w;
    for (char c : l) {
      if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
        if (!w.empty()) words.push_back(std::move(w));
        w.clear();
      } else {
        w.push_back(c);
      }
    }
    if (!w.empty()) words.push_back(std::move(w));
    if (words.empty()) continue;
    if (words.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": expected \"SRC DST\", got \"", line, "\""));
    }
    uint32_t ends[2];
    for (int i = 0; i < 2; ++i) {
      auto it = index.find(words[i]);
      if (it == index.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ":", line_no, ": node '", words[i], "' is not in the inventory"));
      }
      ends[i] = it->second;
    }
    if (ends[0] == ends[1]) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": node '", words[0], "' paired with itself"));
    }
    out.emplace_back(ends[0], ends[1]);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no pairs"));
  return out;
}

}  // namespace gdrbench::controller::schedule
