// A port's state as the controller reads it from an agent's NodeInfo, and
// the node as a run records it. Every port-state comparison in the
// controller goes through PortStateOf.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "gdrbench/v1/node.pb.h"

namespace gdrbench::controller::run {

// port_state, else the deprecated string an agent before the enum sends
// ("PORT_ACTIVE"); PORT_STATE_UNSPECIFIED when neither names a state.
v1::PortState PortStateOf(const v1::RdmaPort& port);

// ibv_devinfo's spelling, the deprecated string's: PORT_STATE_ACTIVE ->
// "PORT_ACTIVE"; "" for PORT_STATE_UNSPECIFIED.
std::string PortStateName(v1::PortState state);
// The reverse: "PORT_ACTIVE" -> PORT_STATE_ACTIVE; PORT_STATE_UNSPECIFIED for
// a string that names no state (also "").
v1::PortState PortStateFromName(std::string_view name);

// For a person: the state's name, else (a state the enum does not name) the
// agent's own string, e.g. "PORT_UNKNOWN(7)".
std::string PortStateText(const v1::RdmaPort& port);

// The node as Run.nodes keeps it: every port's state in the deprecated
// string only (filled from port_state when an agent sent only that), so a
// run.json reads as before the enum and an older server, which refuses a
// field it does not know, still takes it.
v1::NodeInfo ForRunRecord(v1::NodeInfo info);

}  // namespace gdrbench::controller::run
