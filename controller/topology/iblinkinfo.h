// Reads `iblinkinfo --line` output (infiniband-diags, iblinkinfo(8)) into a
// Fabric: one line per port, as rdma-core's iblinkinfo.c print_port writes
// it in line mode:
//
//   0x248a07030017b128 "   thing4 HCA-1"  612  1[  ] ==( 4X  25.78125 Gbps Active/  LinkUp)==>  0xec0d9a030002b810  496  20[  ] "SwitchIB ..." ( )
//   0xec0d9a030002b810 "SwitchIB ..."     496  9[  ] ==(                Down/ Polling)==>             [  ] "" ( )
//
// i.e. port GUID, node description (right-aligned in 30 columns), LID, port
// [external port], ==(width lane-speed state/physical state)==>, and the
// peer's port GUID, LID, port and description, then "(could-be hints)".
// A down port or one without a peer ("Port not available") carries no
// cable and is skipped. `--additional`'s " (HOQ:n VL_Stall:n)" is accepted.
//
// Line mode does not say which nodes are switches: a switch's ports all
// print its port 0 GUID, so a GUID seen with two or more port numbers is a
// switch (a full iblinkinfo lists every port of a switch, down ones
// included); a GUID seen on one port is a host when its peer is a switch.
// A device it cannot place is an error, never a guess. Device ids follow
// ibnetdiscover's ("S-<16 hex>", "H-<16 hex>"); a host's `port_guid` and
// `guid` are the line's GUID (line mode prints port GUIDs).
//
// Each cable may be listed from both ends; the ends must agree (CableBook).
// The rate is width x the lane's nominal rate: "4X 25.78125 Gbps" is 4xEDR,
// 100 Gb/s. Errors (INVALID_ARGUMENT) name the file, the line and what did
// not parse: "links.txt:3: lane speed '7.5 Gbps' is not one iblinkinfo prints".
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

absl::StatusOr<Fabric> ParseIblinkinfo(const std::string& text, const std::string& source);

// NOT_FOUND naming FILE when it cannot be read, else as ParseIblinkinfo.
absl::StatusOr<Fabric> LoadIblinkinfo(const std::string& path);

}  // namespace gdrbench::controller::topology
