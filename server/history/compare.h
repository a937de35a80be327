// Two stored runs compared cell by cell (CompareRuns): for each matrix both
// runs have (same rail and size), every (src, dst) in either; counts of
// compared, dropped and improved cells past the tolerance, of cells only in
// one run and of status changes; the changed cells with the largest drops
// first, paged by offset. Memory: run a's cells of one matrix, plus the
// changed cells kept for the page (at most offset + page size).
// Errors: the store's.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gdrbench/v1/controller.pb.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

struct CompareSpec {
  std::optional<uint32_t> rail;
  uint64_t size_bytes = 0;
  int64_t node = -1;         // nodes.id
  double tolerance = 0.05;
  uint64_t offset = 0;
  uint32_t page_size = 100;
};

absl::StatusOr<v1::CompareRunsResponse> CompareRuns(store::Store& store, const store::RunRow& a,
                                                    const store::RunRow& b, const CompareSpec& spec);

// The change of one cell: b / a - 1 when both are OK, else 0.
double ChangeFraction(double a_gbps, double b_gbps);

}  // namespace gdrbench::server::history
