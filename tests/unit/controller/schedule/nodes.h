// The node shapes the schedule tests build: n nodes, each with the rails of
// `rail_gpu` (the GPU each rail is paired with, -1 for none).
#pragma once

#include <cstdint>
#include <vector>

#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

inline std::vector<NodeShape> Nodes(uint32_t n, std::vector<int> rail_gpu = {-1}) {
  return std::vector<NodeShape>(n, NodeShape{rail_gpu});
}

}  // namespace gdrbench::controller::schedule
