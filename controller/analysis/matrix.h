// The bandwidth matrix of a sweep: one src x dst matrix per (rail, size)
// (cross-rail runs: per (initiators' rail, targets' rail, size)),
// cells holding Gb/s (BW average) or a status, built incrementally from pair
// results. Compact (a float per cell) so 1024 nodes x 8 rails fit easily;
// ToProto renders the v1 messages for reports.
//
// Bidirectional tests fill (src, dst) from `sizes` and (dst, src) from
// `reverse_sizes`; a failed one fails both cells.
// Thread safety: none; one thread builds, then read-only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gdrbench/v1/run.pb.h"
#include "report/lane.h"

namespace gdrbench::controller::analysis {

enum class Verdict : uint8_t { kNone = 0, kPass, kLow, kFail };
const char* VerdictName(Verdict v);

struct Cell {
  float gbps = 0;
  float expected_gbps = 0;
  float baseline_gbps = 0;
  v1::ResultStatus status = v1::RESULT_STATUS_UNSPECIFIED;  // UNSPECIFIED = not tested
  Verdict verdict = Verdict::kNone;
  bool present() const { return status != v1::RESULT_STATUS_UNSPECIFIED; }
};

struct Matrix {
  uint32_t rail = 0;      // the initiators' rail
  // The targets' rail in cross-rail runs; kSameRail (every other mode):
  // `rail`. Read it through target_rail().
  static constexpr uint32_t kSameRail = UINT32_MAX;
  uint32_t dst_rail = kSameRail;
  uint64_t size_bytes = 0;
  uint32_t n = 0;
  std::vector<Cell> cells;                            // n * n, row = src
  std::unordered_map<uint32_t, std::string> reasons;  // cell index -> why (failed/low cells)
  std::unordered_set<uint32_t> retested;              // cell indices measured again by an outlier retest
  Cell& at(uint32_t src, uint32_t dst) { return cells[size_t{src} * n + dst]; }
  const Cell& at(uint32_t src, uint32_t dst) const { return cells[size_t{src} * n + dst]; }
  uint32_t target_rail() const { return dst_rail == kSameRail ? rail : dst_rail; }
  bool cross_rail() const { return target_rail() != rail; }
};

// A matrix's lane (report/lane.h): what blame and the reports group by. The
// lanes of the v1 messages and of a Matrix form one overload set here.
using gdrbench::report::DstRail;
using gdrbench::report::LaneKey;
using gdrbench::report::LaneName;
inline uint64_t LaneKey(const Matrix& m) { return LaneKey(m.rail, m.target_rail()); }
inline std::string LaneName(const Matrix& m) { return LaneName(m.rail, m.target_rail()); }

// What the matrices take of one finished test: the PairResult fields that
// fill cells, nothing else. A resume decodes it straight from the journal
// (run::JournalVisitor::on_measured) instead of rebuilding whole results.
struct MeasuredTest {
  struct Rate {
    uint64_t size_bytes = 0;
    double bw_avg_gbps = 0;
  };
  uint32_t rail = 0;
  uint32_t dst_rail = 0;  // the targets' rail: `rail` but in cross-rail runs
  v1::ResultStatus status = v1::RESULT_STATUS_UNSPECIFIED;
  std::string_view reason;  // valid for the Add call only
  double expected_gbps = 0;
  std::vector<Rate> sizes;          // PairResult.sizes
  std::vector<Rate> reverse_sizes;  // PairResult.reverse_sizes (bidirectional)
};

// `out` (its vectors reused) filled from `r`.
void Measured(const v1::PairResult& r, MeasuredTest* out);

class MatrixSet {
 public:
  // `bidirectional`: the run's tests were bidirectional (see above).
  explicit MatrixSet(std::vector<std::string> nodes, bool bidirectional = false);

  // Adds one pair result; unknown node names are ignored (counted).
  void Add(const v1::PairResult& result);
  // The same with its endpoints' indices into nodes() known (the runner's
  // test: the plan's node order), without looking the names up.
  void Add(const v1::PairResult& result, uint32_t src, uint32_t dst);
  // The same from what the matrices take of it (Measured(result) gives the
  // cells Add(result) does).
  void Add(const MeasuredTest& test, uint32_t src, uint32_t dst);

  const std::vector<std::string>& nodes() const { return nodes_; }
  // All matrices, ordered by (rail, dst rail, size). The const overloads
  // assume a non-const call already happened after the last Add.
  std::vector<Matrix*> matrices();
  std::vector<const Matrix*> matrices() const;
  // The matrices verdicts are reached on: each lane's largest size.
  std::vector<Matrix*> VerdictMatrices();
  std::vector<const Matrix*> VerdictMatrices() const;
  size_t unknown_nodes() const { return unknown_; }
  int NodeIndex(const std::string& name) const;

 private:
  struct Key {
    uint32_t rail, dst_rail;
    uint64_t size;
    auto operator<=>(const Key&) const = default;
  };
  Matrix& Get(uint32_t rail, uint32_t dst_rail, uint64_t size);
  void MergePlaceholders();
  bool bidirectional_;
  bool pending_failures_hint_ = false;
  std::vector<std::string> nodes_;
  std::unordered_map<std::string, uint32_t> index_;
  std::map<Key, Matrix> m_;
  size_t unknown_ = 0;
  MeasuredTest scratch_;  // Add(PairResult)'s, reused
};

// Statistics of the OK cells of each row, each column and the whole matrix.
v1::AxisStats Stats(const std::vector<float>& values, uint32_t bad, uint32_t low);
void FillStats(const Matrix& m, const std::vector<std::string>& nodes, v1::BandwidthMatrix* out);

// The v1 message for one matrix: present cells only (row by row), with
// stats. with_cells = false: everything but the cells (a run streamed in
// pieces renders them with AppendCells).
v1::BandwidthMatrix ToProto(const Matrix& m, const std::vector<std::string>& nodes, bool with_cells = true);

// Appends the v1 messages of at most `max_cells` present cells of `m` to
// `out`, in ToProto's order, from the cell index `*cursor` (start at 0);
// advances `*cursor` past them. Returns whether present cells are left.
// A 1024-node matrix renders chunk by chunk without its million messages
// in memory at once.
bool AppendCells(const Matrix& m, size_t* cursor, size_t max_cells,
                 google::protobuf::RepeatedPtrField<v1::MatrixCell>* out);
// The cells ToProto renders.
size_t PresentCells(const Matrix& m);

}  // namespace gdrbench::controller::analysis
