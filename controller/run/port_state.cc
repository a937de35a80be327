#include "controller/run/port_state.h"

namespace gdrbench::controller::run {

// The deprecated string is read and written here and nowhere else in the
// controller (protoc marks its accessors deprecated).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

v1::PortState PortStateOf(const v1::RdmaPort& port) {
  if (port.port_state() != v1::PORT_STATE_UNSPECIFIED) return port.port_state();
  return PortStateFromName(port.state());
}

std::string PortStateText(const v1::RdmaPort& port) {
  const v1::PortState s = PortStateOf(port);
  return s == v1::PORT_STATE_UNSPECIFIED ? port.state() : PortStateName(s);
}

v1::NodeInfo ForRunRecord(v1::NodeInfo info) {
  for (v1::NicInfo& nic : *info.mutable_nics()) {
    for (v1::RdmaPort& port : *nic.mutable_ports()) {
      if (port.state().empty()) port.set_state(PortStateName(port.port_state()));
      port.clear_port_state();
    }
  }
  return info;
}

#pragma GCC diagnostic pop

std::string PortStateName(v1::PortState state) {
  switch (state) {
    case v1::PORT_STATE_NOP: return "PORT_NOP";
    case v1::PORT_STATE_DOWN: return "PORT_DOWN";
    case v1::PORT_STATE_INIT: return "PORT_INIT";
    case v1::PORT_STATE_ARMED: return "PORT_ARMED";
    case v1::PORT_STATE_ACTIVE: return "PORT_ACTIVE";
    case v1::PORT_STATE_ACTIVE_DEFER: return "PORT_ACTIVE_DEFER";
    default: return "";
  }
}

v1::PortState PortStateFromName(std::string_view name) {
  for (int s = v1::PortState_MIN; s <= v1::PortState_MAX; ++s) {
    const auto state = static_cast<v1::PortState>(s);
    if (v1::PortState_IsValid(s) && state != v1::PORT_STATE_UNSPECIFIED && PortStateName(state) == name) {
      return state;
    }
  }
  return v1::PORT_STATE_UNSPECIFIED;
}

}  // namespace gdrbench::controller::run
