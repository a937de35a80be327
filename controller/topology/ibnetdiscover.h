// Reads `ibnetdiscover` output (infiniband-diags, ibnetdiscover(8)) into a
// Fabric. The records it reads:
//
//   switchguid=0xff08c43215bae48(ff08c43215bae48)
//   Switch  41 "S-0ff08c43215bae48"  # "MF0;...:MQM8700/U1" enhanced port 0 lid 556 lmc 0
//   [1]     "H-0ff08c4321664e96"[1](ff08c4321664e96)  # "RMD701091901003 ibp11s0f0" lid 1181 4xHDR ...
//   caguid=0xff08c4321664e96
//   Ca      1 "H-0ff08c4321664e96"   # "RMD701091901003 ibp11s0f0"
//   [1](ff08c4321664e96)  "S-0ff08c43215bae48"[1]  # lid 1181 lmc 0 "MF0;...:MQM8700/U1" lid 556 4xHDR ...
//
// vendid=, devid=, sysimgguid= lines, comments (#...) and blank lines are
// skipped. Every cable is kept once (both ends list it); the two ends must
// agree. Errors (INVALID_ARGUMENT) name the file and line and what did not
// parse or agree: "fabric.txt:12: port line outside a Switch or Ca record",
// "fabric.txt:40: S-..[3] says its peer is H-..[1], but H-..[1] (line 88)
// says S-..[5]".
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

// Parses `text`; `source` names it in errors and in each record's `where`.
absl::StatusOr<Fabric> ParseIbnetdiscover(const std::string& text, const std::string& source);

// Reads and parses FILE; NOT_FOUND naming it when it cannot be read.
absl::StatusOr<Fabric> LoadIbnetdiscover(const std::string& path);

}  // namespace gdrbench::controller::topology
