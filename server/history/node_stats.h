// Per-node statistics of one matrix (a rail at its verdict size), computed
// at ingest from the cells as they arrive: for every node, its OK cells as
// initiator (row) and as target (column), their medians, and its low and
// failed cells. What a node's trend and the per-node metrics read.
// Memory: one float per OK cell of the matrix, until Finish.
// Thread safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::server::history {

// The median; the mean of the two middle values for an even count; 0 when empty.
double Median(std::vector<float> values);

struct NodeStat {
  uint32_t node = 0;          // index into the matrix's nodes
  uint32_t ok_cells = 0, low_cells = 0, failed_cells = 0;
  double median_gbps = 0;     // all its OK cells, both directions
  double tx_median_gbps = 0;  // as initiator
  double rx_median_gbps = 0;  // as target
};

// A cell's verdict as stored (cells.verdict): v1.MatrixCell's strings.
enum class CellVerdict : uint8_t { kNone = 0, kPass = 1, kLow = 2, kFail = 3 };
// "" -> kNone, "pass", "low", "fail"; false for anything else.
bool ParseVerdict(const std::string& name, CellVerdict* out);
const char* VerdictName(CellVerdict v);

class NodeStatsBuilder {
 public:
  explicit NodeStatsBuilder(uint32_t nodes);
  void Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps, CellVerdict verdict);
  // One entry per node that has a cell, in node order.
  std::vector<NodeStat> Finish();

 private:
  struct Acc {
    std::vector<float> tx, rx;
    uint32_t low = 0, failed = 0;
    bool seen = false;
  };
  std::vector<Acc> acc_;
};

}  // namespace gdrbench::server::history
