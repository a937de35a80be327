// Blame: who is to blame for the bad (low or fail) cells of judged verdict
// matrices, in steps each tested on its own:
//   TallyRail   per rail: each node's tested and bad cells, and the nodes
//               that are bad with most of their partners ("most" = more
//               than half of its tested cells, rows and columns, and at
//               least two), accepted worst first (ties at once); an accepted node's cells
//               no longer count against its partners (a dead node must not
//               drag a neighbour with one noisy cell over the line);
//   FleetBlames fleet: every tested cell of a rail is bad and no rail is
//               clean: nothing singles out a node or a link, so none is
//               blamed ("every node", or "every node on rail 2");
//   RailBlames  rail: most nodes of a rail are bad while another rail has no
//               bad node (suspect the rail's switch or cabling);
//   NodeBlames  node: bad on every rail it has; nic: bad on some rails only
//               (that node's NIC of each such rail);
//   LinkBlames  link: a bad cell whose nodes are not blamed themselves
//               ("a<->b" when both directions are bad).
// A "rail" is a lane (matrix.h LaneKey): in cross-rail runs each (initiators'
// rail, targets' rail) pair is one, named "rail 0->1" in the subjects; a
// cross-rail "nic" blame is either of the node's two NICs of that lane.
// Blame runs them in that order. Skipped cells (a node left out) are not
// tested cells: they blame nobody. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/analysis/matrix.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

struct NodeTally {
  uint32_t cells = 0, bad = 0;   // tested cells to and from the node, bad ones
  uint32_t failed = 0;           // ... of them errored (verdict fail: the test did not complete)
  uint32_t low = 0, low_retested = 0;  // ... read low; of those, measured again by a retest
  std::vector<float> ok_values;  // Gb/s of its OK cells
};

struct RailTally {
  uint32_t rail = 0;
  uint32_t dst_rail = 0;  // cross-rail lanes: the targets' rail (else `rail`)
  uint64_t lane = 0;      // LaneKey(rail, dst_rail): what the sets below hold
  std::vector<NodeTally> nodes;  // per node index
  std::vector<bool> bad_node;    // bad with most partners on this rail
  uint32_t nodes_tested = 0, nodes_bad = 0;
  uint32_t cells = 0, bad_cells = 0;  // tested cells of the rail, bad ones
};

RailTally TallyRail(const Matrix& m);

// `all_bad` receives the rails blamed (every cell bad, no rail clean).
std::vector<v1::Blame> FleetBlames(const std::vector<RailTally>& rails, std::set<uint64_t>* all_bad);

// `bad_rails` receives the rails blamed; none when FleetBlames blamed some
// (pass its set).
std::vector<v1::Blame> RailBlames(const std::vector<RailTally>& rails, std::set<uint64_t>* bad_rails);

// `explained` receives the (node, rail) cells a node, NIC or rail blame
// accounts for. Rails in `bad_rails` are not blamed on nodes again.
std::vector<v1::Blame> NodeBlames(const std::vector<RailTally>& rails,
                                  const std::set<uint64_t>& bad_rails,
                                  const std::vector<std::string>& names,
                                  std::set<std::pair<uint32_t, uint64_t>>* explained);

// Bad cells that `explained` (node, rail) does not cover. The reason is the
// cell's own (matrix reasons) or "low", then what to suspect.
std::vector<v1::Blame> LinkBlames(const std::vector<const Matrix*>& verdict_matrices,
                                  const std::vector<std::string>& names,
                                  const std::set<std::pair<uint32_t, uint64_t>>& explained);

// All of the above over a rail's verdict matrix each: rail, node/nic, link.
std::vector<v1::Blame> Blame(const std::vector<const Matrix*>& verdict_matrices,
                             const std::vector<std::string>& names);

// How a blame is named in one line: "node a", "link a->b", "rail 2",
// "every node".
std::string BlameLabel(const v1::Blame& blame);

// The median of `v` (0 when empty; the mean of the middle two when even).
double Median(std::vector<float> v);

}  // namespace gdrbench::controller::analysis
