// A port's logical state on the agent's side, without protobuf (the agent's
// service converts it to v1::PortState, agent/service/node_info.h).
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace gdrbench::agent::verbs {

// libibverbs' enum ibv_port_state, the same numbers (/usr/include/infiniband/
// verbs.h; port_state.cc checks them against the header at compile time).
// sysfs prints them too ("4: ACTIVE"). A code this build does not name keeps
// its number (PortStateName: "PORT_UNKNOWN(7)"); kUnread: not read.
enum class PortState : int {
  kUnread = -1,
  kNop = 0,
  kDown = 1,
  kInit = 2,
  kArmed = 3,
  kActive = 4,
  kActiveDefer = 5,
};

// An ibv_port_attr.state code, and back.
PortState PortStateFromIbv(int code);
int PortStateToIbv(PortState state);

// As ibv_devinfo prints it: "PORT_ACTIVE", "PORT_DOWN", ...; rdma-core's
// ibv_port_state_str says "active", which is not what operators grep for.
// "PORT_UNKNOWN(N)" for a code without a name, "" for kUnread.
std::string PortStateName(PortState state);

// "PORT_ACTIVE", "active" (ibv_port_state_str), "4: ACTIVE" (sysfs: the
// number counts), "active defer" -> kActive / kActiveDefer, likewise for the
// other states, any case; kUnread for text that names no state.
PortState ParsePortState(std::string_view text);

}  // namespace gdrbench::agent::verbs
