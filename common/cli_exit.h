// How every gdrbench binary ends a failed flag parse: --help and --version
// print and exit 0; a usage error is one line on stderr and exit code 2
// (CLI11's own codes, 100+, mean nothing to scripts).
#pragma once

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/cli_suggest.h"
#include "common/listen_address.h"

namespace gdrbench {

inline int ExitOnParseError(const CLI::App& app, const CLI::ParseError& e, const char* program) {
  if (e.get_exit_code() == 0) return app.exit(e);
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program, e.what(), program);
  return 2;
}

// As above; a failed parse whose command line holds an unknown flag or
// subcommand near a known one says that instead ("did you mean"), since
// CLI11's own message for it may name another problem ("A subcommand is
// required", "--inventory is required").
inline int ExitOnParseError(const CLI::App& app, const CLI::ParseError& e, const char* program, int argc,
                            const char* const* argv) {
  if (e.get_exit_code() != 0) {
    if (std::string hint = SuggestForArgs(app, program, argc, argv); !hint.empty()) {
      std::fprintf(stderr, "%s: %s (see %s --help)\n", program, hint.c_str(), program);
      return 2;
    }
  }
  return ExitOnParseError(app, e, program);
}

// A listen flag's CLI11 check: ParseListenAddress's rule, at parse time, so a
// bad port is a usage error (exit 2) in every binary alike.
inline CLI::Validator ListenAddressCheck() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        auto parsed = ParseListenAddress("", value);
        return parsed.ok() ? std::string() : std::string(parsed.status().message());
      },
      "HOST:PORT", "listen address");
}

}  // namespace gdrbench
