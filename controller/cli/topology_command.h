// `gdrbench topology show`: reads a fabric dump (ibnetdiscover,
// iblinkinfo --line, or a directory of lldpctl -f json files) and prints
// the model: switches, cables per tier, the inventory's rails not found in
// it and the host cables no rail claims. Exit 0 when it printed, 2 for a
// file that cannot be read or bad input (the reader's error names the file
// and line), 4 otherwise.
#pragma once

#include <functional>
#include <string>

#include "CLI/CLI.hpp"

namespace gdrbench::controller::cli {

struct TopologyOptions {
  std::string inventory;  // optional: without it no matching is printed
  std::string topology;
  std::string format = "auto";
  // `plan` only:
  std::string mode = "cover";      // cover | shift
  std::string routing = "ftree";   // ftree | ecmp
  double ecmp_confidence = 0.99;
  int max_rounds = 64;
  bool json = false;
};

int TopologyShowCommand(const TopologyOptions& options);

// `gdrbench topology plan`: the cover or shift plan of the fabric, as a dry
// run (nothing is run): rounds beside the lower bound, cables covered per
// tier, the cables not covered and why; --json adds each flow's cables.
int TopologyPlanCommand(const TopologyOptions& options);

// Adds `topology show`; `*run` is set to the command when it is chosen.
void AddTopologySubcommands(CLI::App& app, TopologyOptions& options, std::function<int()>* run);

}  // namespace gdrbench::controller::cli
