// The capacity report (v1.CapacityReport, made by gdrbench-server) as text
// for a terminal or a mail (`gdrbench report capacity`) and as CSV for a
// spreadsheet (the CLI's --format csv and the server's .../capacity.csv):
// the groups table, a blank line, then the weakest links table.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "gdrbench/v1/capacity.pb.h"

namespace gdrbench::report {

std::string RenderCapacityText(const v1::CapacityReport& report);
std::string RenderCapacityCsv(const v1::CapacityReport& report);

}  // namespace gdrbench::report
