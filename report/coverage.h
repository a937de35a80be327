// --mode cover | shift: the run's fabric coverage (Run.coverage) in words,
// for the CLI's summary, report.md/html and the server's pages.
// Pure functions of the run; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::report {

// "cables measured: host<->leaf 8/8, leaf<->spine 3/4 (1 not: leaf1 port
// swp5 -> spine2 port swp1: its planned flows did not complete)"; under
// ecmp the uplink tiers read "leaf<->spine 4 by hash (each loaded with
// p >= 0.99)"; then what the switch counters said ("; switch counters
// confirm host<->leaf 8/8, leaf<->spine 4/4; 1 counter finding(s): ...") or
// why they were not read. Empty when the run has no coverage (another mode).
std::string CoverageText(const v1::FabricCoverage& coverage);

// One line per cable gap ("leaf1 port swp5 -> spine2 port swp1: why"), at
// most `limit`, then "... and N more".
std::vector<std::string> CoverageGapLines(const v1::FabricCoverage& coverage, size_t limit);

// One line per counter finding ("leaf1 port swp5 -> spine2 port swp1: no
// traffic: expected ..."), at most `limit`, then "... and N more".
std::vector<std::string> CounterFindingLines(const v1::FabricCoverage& coverage, size_t limit);

}  // namespace gdrbench::report
