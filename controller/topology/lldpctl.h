// Reads LLDP neighbours as `lldpctl -f json` (lldpd) prints them, for RoCE
// fabrics: each system (host or switch) that runs lldpd lists, per local
// interface, the chassis and port it hears on the wire:
//
//   {"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"leaf1": {"id": {...}}},
//                                     "port": {"id": {"type": "ifname", "value": "Ethernet4"},
//                                              "descr": "..."}}}}}
//
// lldpctl writes "interface" as an object when one interface has a
// neighbour and as a list of one-key objects when several do; a chassis
// without a system name is written {"id": {...}} and named by its id.
// The far port is named by its id when the id is an interface name
// ("ifname", "local"), else by its description (Linux lldpd sends the MAC
// as id and the interface name as description).
//
// A fabric is built from one such file per system: DIR/NAME.json is
// lldpctl's output on system NAME. Hosts are the systems the caller names
// (the inventory's nodes); every other system is a switch: LLDP does not
// say which is which. Ports are named, not numbered (Device::port_names).
// Every cable heard from both ends must agree. Cable rates are unknown
// (0): LLDP does not carry them.
//
// Errors (INVALID_ARGUMENT) name the file and line and what did not parse:
// "gpu01.json:12: lldp.interface.eth0.port: no id". Thread safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

struct LldpNeighbor {
  std::string local_port;  // the interface of the system that ran lldpctl: "eth0"
  std::string chassis;     // the neighbour's system name (or chassis id)
  std::string port;        // the neighbour's port, named as above
  std::string where;       // "FILE:LINE" of the interface's entry
};

absl::StatusOr<std::vector<LldpNeighbor>> ParseLldpctlJson(const std::string& text, const std::string& source);

struct LldpSystem {
  std::string name;  // the system that ran lldpctl
  std::vector<LldpNeighbor> neighbors;
};

// The fabric of `systems`' neighbours; `hosts` names the systems that are
// hosts. INVALID_ARGUMENT when `hosts` is empty (LLDP cannot tell hosts from
// switches), or when two ends of a cable disagree.
absl::StatusOr<Fabric> FabricFromLldp(const std::vector<LldpSystem>& systems, const std::set<std::string>& hosts);

// Reads every DIR/*.json (NAME.json = lldpctl's output on NAME) and builds
// the fabric. NOT_FOUND when DIR has no .json file or cannot be read.
absl::StatusOr<Fabric> LoadLldpDir(const std::string& dir, const std::set<std::string>& hosts);

}  // namespace gdrbench::controller::topology
