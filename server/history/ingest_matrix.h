// What the Ingester keeps of one matrix of the run's header while its cells
// arrive (ingest.cc opens and closes it; ingest_cells.cc fills it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/matrix_blob.h"
#include "server/history/capacity.h"
#include "server/history/ingest.h"
#include "server/history/link_noise.h"
#include "server/history/node_stats.h"
#include "server/history/regressions.h"

namespace gdrbench::server::history {

// One matrix of the header, while its cells arrive.
struct Ingester::MatrixState {
  uint32_t rail = 0;
  uint64_t size_bytes = 0;
  std::shared_ptr<const std::vector<std::string>> names;
  std::vector<int64_t> ids;  // nodes.id per index
  bool verdict = false;      // the rail's largest size
  bool closed = false;
  std::vector<bool> seen;  // n x n: a cell sent twice is refused
  uint64_t cells = 0;
  std::unique_ptr<NodeStatsBuilder> stats;
  std::unique_ptr<CapacityBuilder> capacity;
  // The heatmap's matrix (the run page's first request), stored at close.
  std::unique_ptr<report::MatrixBlobBuilder> blob;
  // Per reference: its cells of this matrix by (src id, dst id), and what was
  // compared (the history reference has no cells: the noise windows are its).
  struct RefCells {
    std::vector<std::pair<std::pair<int64_t, int64_t>, float>> ok;  // sorted
    std::vector<ComparedCell> compared;
  };
  std::vector<RefCells> refs;
  std::unique_ptr<LinkNoiseTable> noise;  // verdict matrices
};

}  // namespace gdrbench::server::history
