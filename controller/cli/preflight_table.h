// Human-readable rendering of a PreflightReport: one line per check, then the
// evidence and the fix of every check that did not pass.
#pragma once

#include <string>

#include "gdrbench/v1/preflight.pb.h"

namespace gdrbench::controller::cli {

// "PASS", "WARN", "FAIL", "SKIP", "?".
const char* CheckStatusName(v1::CheckStatus status);

// `verbose`: evidence of passing checks too.
std::string FormatPreflight(const v1::PreflightReport& report, bool verbose = false);

}  // namespace gdrbench::controller::cli
