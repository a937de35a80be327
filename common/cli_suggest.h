// "Did you mean": CLI11 2.1 (the version this project builds with) has no
// suggestions of its own (its App.hpp only lists extra arguments, and a
// mistyped required flag reads "Exactly 1 option ... is required"), so when a
// parse fails, the command line is walked again against the app's subcommands
// and flags, and the first unknown one is named with its nearest spelling.
// Thread safety: pure functions over a const app.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace gdrbench {

// Levenshtein distance between `a` and `b`.
inline size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The candidate nearest to `word`, when near enough to be a typo (at most 2
// edits, or a third of the word); "" otherwise.
inline std::string Nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

namespace cli_suggest_internal {

// The option `name` ("--x") as `app` or a parent it falls through to knows it.
inline const CLI::Option* FindOption(const CLI::App* app, const std::string& name) {
  for (const CLI::App* a = app; a != nullptr; a = a->get_fallthrough() ? a->get_parent() : nullptr) {
    if (const CLI::Option* o = a->get_option_no_throw(name)) return o;
  }
  return nullptr;
}

// The long flag names of `app` and of its option groups (nameless subcommands).
inline void LongNames(const CLI::App* app, std::vector<std::string>* out) {
  for (const CLI::Option* opt : app->get_options()) {
    for (const std::string& l : opt->get_lnames()) out->push_back("--" + l);
  }
  for (const CLI::App* g : app->get_subcommands([](const CLI::App* s) { return s->get_name().empty(); })) {
    LongNames(g, out);
  }
}

// "gdrbench sweep": the program, then each subcommand down to `app`.
inline std::string Path(const CLI::App* app, const std::string& program) {
  std::string p;
  for (const CLI::App* a = app; a->get_parent() != nullptr; a = a->get_parent()) p = " " + a->get_name() + p;
  return program + p;
}

}  // namespace cli_suggest_internal

// One line naming the first unknown flag or subcommand of argv and its
// nearest spelling ("unknown flag '--inventry' for 'gdrbench sweep'; did you
// mean '--inventory'?"), or "" when every word is known or nothing is near.
inline std::string SuggestForArgs(const CLI::App& app, const std::string& program, int argc,
                                  const char* const* argv) {
  using cli_suggest_internal::FindOption;
  const CLI::App* at = &app;
  bool value_next = false;  // the previous word was a flag that takes a value
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (word.rfind("--", 0) == 0 && word.size() > 2) {
      std::string name = word.substr(0, word.find('='));
      const CLI::Option* o = FindOption(at, name);
      if (o == nullptr) {
        std::vector<std::string> known;
        for (const CLI::App* a = at; a != nullptr; a = a->get_fallthrough() ? a->get_parent() : nullptr) {
          cli_suggest_internal::LongNames(a, &known);
        }
        std::string near = Nearest(name, known);
        if (near.empty()) return "";
        return "unknown flag '" + name + "' for '" + cli_suggest_internal::Path(at, program) + "'; did you mean '" + near + "'?";
      }
      value_next = word.find('=') == std::string::npos && o->get_expected_min() > 0;
      continue;
    }
    if (value_next || word.rfind("-", 0) == 0) {
      value_next = false;
      continue;
    }
    std::vector<std::string> subs;
    const CLI::App* next = nullptr;
    for (const CLI::App* s : at->get_subcommands([](const CLI::App* c) { return !c->get_name().empty(); })) {
      if (s->check_name(word)) next = s;
      subs.push_back(s->get_name());
    }
    if (next != nullptr) {
      at = next;
      continue;
    }
    if (subs.empty()) continue;  // a positional argument
    std::string near = Nearest(word, subs);
    if (near.empty()) return "";
    return "unknown command '" + word + "' for '" + cli_suggest_internal::Path(at, program) + "'; did you mean '" + near + "'?";
  }
  return "";
}

}  // namespace gdrbench
