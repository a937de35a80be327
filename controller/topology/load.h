// One entry point for every topology source `--topology` accepts.
#pragma once

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

// `format`: "ibnetdiscover", "iblinkinfo" (--line output), "lldp" (a
// directory of NAME.json, lldpctl -f json on NAME), or "auto": a directory
// is lldp; a file whose first line that is neither blank nor a comment
// starts with "0x" is iblinkinfo --line; any other file ibnetdiscover.
// `hosts` (the inventory's node names) tells LLDP's hosts from switches.
// INVALID_ARGUMENT for another format; else the reader's errors.
absl::StatusOr<Fabric> LoadTopology(const std::string& path, const std::string& format,
                                    const std::set<std::string>& hosts);

}  // namespace gdrbench::controller::topology
