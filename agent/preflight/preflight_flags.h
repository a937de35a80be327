// The flags of a one-shot preflight, spelled and meant the same in
// gdrbench-preflight and `gdrbench-agent preflight` (one word per concept,
// issue 32): --fs-root, --checks, --devices, --rail-nics, --json, --verbose,
// --pcie-under-load. Header-only: both binaries link CLI11, the preflight
// library does not.
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "agent/preflight/preflight.h"

namespace gdrbench::agent::preflight {

inline void AddOneShotPreflightFlags(CLI::App* cmd, std::string& fs_root, bool& json, bool& verbose,
                                     RunOptions& run) {
  cmd->add_option("--fs-root", fs_root, "a captured tree or capture .tar.gz (default: this node, live)")
      ->capture_default_str();
  cmd->add_option("--checks", run.checks, "only these checks (comma-separated ids)")->delimiter(',');
  cmd->add_option(
         "--devices", run.devices,
         "RDMA devices to check, each a rail (comma-separated; default: all, as the agent's --devices)")
      ->delimiter(',');
  cmd->add_option("--rail-nics", run.expect.rail_nics,
                  "NICs that are GPU rails beyond each GPU's nearest (comma-separated)")
      ->delimiter(',');
  cmd->add_flag("--json", json, "print the v1 PreflightReport as JSON");
  cmd->add_flag("--verbose", verbose, "show the evidence of passing checks too");
  cmd->add_flag("--pcie-under-load", run.load_all_gpu_links,
                "load every GPU for the PCIe link check, not only those below their maximum speed");
}

}  // namespace gdrbench::agent::preflight
