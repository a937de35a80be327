// Coverage proven by counters (issue 28, item 3): a site's switch port
// counters read before the first test and after the last, set against the
// bytes the plan's completed flows carried over each cable.
//
// The counters come as v1.SwitchCounters JSON (run.proto; a site's export,
// or `fabric counters` in the lab). A cable's end is found in them by any
// name the topology gives its device (id, node description, GUID) and by
// its port's name or number. Each cable is crossed in two directions: up
// (lower end -> upper end: the lower end's tx, the upper end's rx) and down.
//
// Findings, each naming the cable and the numbers it saw:
//   "no traffic"          completed flows crossed the cable in a direction,
//                         and neither end's counters moved by half their
//                         payload: the fabric did not route as the model
//                         says (or the topology names the wrong cable);
//   "errors"              an end's rx_errors + tx_errors grew;
//   "drops"               an end's rx_dropped + tx_dropped grew;
//   "not in the counters" a cable the flows crossed whose ends the counters
//                         do not list (nothing is proven about it);
//   "counters went back"  an end's counter is lower after than before (a
//                         reset or a wrap): that end is not judged.
// A cable whose every loaded direction moved as expected is "confirmed"
// (CableTierCoverage.counters_confirmed).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/run/fabric_paths.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::sweep {

// INVALID_ARGUMENT "<source>: ..." for text that is not the message's JSON
// (an unknown field included), a port without a device or a port name, or
// the same (device, port) twice.
absl::StatusOr<v1::SwitchCounters> ParseSwitchCounters(const std::string& json, const std::string& source);

// What the completed flows carried over one cable, per direction ([0] up,
// [1] down).
struct CableLoad {
  uint64_t bytes[2] = {0, 0};
  uint32_t flows[2] = {0, 0};
};

// Appends the findings to `coverage` (counter_findings, and each tier's
// counters_confirmed). `loads` is indexed like paths.cables.
void JudgeCableCounters(const run::FabricPaths& paths, const std::vector<CableLoad>& loads,
                        const v1::SwitchCounters& before, const v1::SwitchCounters& after,
                        v1::FabricCoverage* coverage);

}  // namespace gdrbench::controller::sweep
