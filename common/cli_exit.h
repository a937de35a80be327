// How every gdrbench binary ends a failed flag parse: --help and --version
// print and exit 0; a usage error is one line on stderr and exit code 2
// (CLI11's own codes, 100+, mean nothing to scripts).
#pragma once

#include <cstdio>

#include "CLI/CLI.hpp"

namespace gdrbench {

inline int ExitOnParseError(const CLI::App& app, const CLI::ParseError& e, const char* program) {
  if (e.get_exit_code() == 0) return app.exit(e);
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program, e.what(), program);
  return 2;
}

}  // namespace gdrbench
