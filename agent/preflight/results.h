// What the checks produce, named in the agent's preflight namespace: the
// report model lives below the agent and the controller
// (report/preflight/report.h), so `gdrbench preflight` renders a report it
// received without linking the agent's libraries.
#pragma once

#include "report/preflight/report.h"

namespace gdrbench::agent::preflight {

using gdrbench::report::preflight::CheckResult;
using gdrbench::report::preflight::Evidence;
using gdrbench::report::preflight::FormatReport;
using gdrbench::report::preflight::Overall;
using gdrbench::report::preflight::Report;
using gdrbench::report::preflight::Status;
using gdrbench::report::preflight::StatusName;

}  // namespace gdrbench::agent::preflight
