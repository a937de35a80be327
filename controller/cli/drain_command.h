// `gdrbench drain`: the nodes a run blames, drained in Slurm with scontrol
// (controller/slurm/drain.h says which and why).
#pragma once

#include <string>

#include "controller/server_client/server_client.h"

namespace gdrbench::controller::cli {

struct DrainOptions {
  std::string run_file;                 // a run.json (gdrbench sweep --out DIR), or
  ServerClientConfig server;            // gdrbench-server (address set) and
  std::string run_id = "latest";        // a run on it ("latest": the newest of --cluster)
  std::string cluster;                  // for "latest": empty = any cluster
  std::string what = "node,nic,excluded";
  double max_fraction = 0.25;
  bool dry_run = false;                 // print the scontrol commands only
  std::string check_node;               // --check NODE: exit 1 with the reason if NODE would be drained
  std::string scontrol = "scontrol";
};

// 0: drained (or nothing to drain, or --check found NODE healthy); 1: a
// scontrol call failed, the fraction limit refused, or --check found NODE
// blamed (its reason on stdout); 2: bad usage.
int DrainCommand(const DrainOptions& options);

}  // namespace gdrbench::controller::cli
