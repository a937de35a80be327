// Which nodes a blame entry names. Blame (controller/analysis) carries its
// subject as text: "node07" (node), "node07 rail 1" (nic), "node01->node04"
// or "node01<->node04", optionally followed by " rail N" (link), "rail 2"
// (rail). Node names may themselves hold spaces or dashes, so the parse is
// checked against the run's node names.
// Thread safety: pure.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::server::web {

struct BlameSubject {
  std::vector<std::string> nodes;  // node, nic: one; link: src then dst
  std::optional<uint32_t> rail;    // nic, rail, and a link of one rail
  bool both_directions = false;    // link "a<->b"
};

// nullopt when the subject names no node of `names` in the form its kind has.
std::optional<BlameSubject> ParseBlameSubject(const v1::Blame& blame, const std::set<std::string>& names);

}  // namespace gdrbench::server::web
