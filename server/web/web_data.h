// What the dashboard's pages read beyond the Controller API (dashboard.proto),
// assembled from the store: a run's overview (its header without the
// per-node inventory), one matrix in the heatmap's binary form, and the
// history of a node or a link over a cluster's recent runs (preflight, blame,
// regressions, when it was first blamed).
// Errors: the store's; NOT_FOUND for an unknown run or matrix;
// INVALID_ARGUMENT for a bad parameter.
// Thread safety: as the store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "gdrbench/v1/dashboard.pb.h"
#include "server/store/store.h"

namespace gdrbench::server::web {

absl::StatusOr<v1::RunOverview> RunOverview(store::Store& store, const store::RunRow& run);

// The matrix of (rail, size) in report/matrix_blob.h's form. No
// rail: the run's first rail; size 0: the rail's verdict size (its largest).
// Each rail's verdict size is the blob stored at ingest; other sizes (and
// runs stored before schema version 3) are built from the cells.
absl::StatusOr<std::string> MatrixBlob(store::Store& store, const store::RunRow& run,
                                       std::optional<uint32_t> rail, uint64_t size_bytes);
// Always from the cells (the same bytes as the stored blob; for the tests).
absl::StatusOr<std::string> MatrixBlobFromCells(store::Store& store, const store::RunRow& run,
                                                std::optional<uint32_t> rail, uint64_t size_bytes);

// A node's preflight findings in one run's header ("" node: none).
v1::NodeFindings FindingsOf(const v1::PreflightReport& report);

struct HistoryQuery {
  std::string cluster;
  std::string node;                 // a node's history, or
  std::string src, dst;             // a link's (either direction)
  std::optional<uint32_t> rail;     // link: only this rail's blame and regressions
  uint32_t last = 14;               // runs looked at, newest first (1 to 200)
};

absl::StatusOr<v1::SubjectHistory> History(store::Store& store, const HistoryQuery& query);

}  // namespace gdrbench::server::web
