// Human-readable rendering of a PreflightReport received from an agent: the
// agents' own text rendering (report/preflight: one formatter for every
// preflight output), fed from the v1 message.
#pragma once

#include <string>

#include "gdrbench/v1/preflight.pb.h"

namespace gdrbench::controller::cli {

// `verbose`: evidence of passing checks too.
std::string FormatPreflight(const v1::PreflightReport& report, bool verbose = false);

}  // namespace gdrbench::controller::cli
