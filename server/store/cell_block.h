// How a run's cells are kept from schema version 6 on (migrations.h): one
// row of cell_blocks per (run, rail, size, source node), holding that
// source's cells, ordered by destination node id, in one zstd-compressed
// block. A 1024 x 8 run is 8,192 rows instead of 8.4 M, so an ingest writes
// a few hundred megabytes in a few thousand statements instead of paying a
// B-tree insert (SQLite) or a COPY row and its index entry (PostgreSQL) per
// cell (bench/results/2026-12-06-server-store.txt). A link is still one
// primary-key lookup per run (the source's block); a node as source is one
// row per matrix.
//
// Block layout before compression, little-endian:
//   uint32 count
//   count x { int64 dst, uint8 status, uint8 verdict, uint16 reason_bytes,
//             float64 bw_avg_gbps, float64 expected_gbps, float64 baseline_gbps }
//   the reasons, concatenated in the same order
// An empty reason is "no reason" (the cells table's NULL).
// Thread safety: the functions are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

// One cell of a block as the writer collects it (reason: a view into the
// writer's own storage).
struct BlockCell {
  int64_t dst = 0;
  int status = 0;
  int verdict = 0;
  double bw_avg_gbps = 0, expected_gbps = 0, baseline_gbps = 0;
  std::string_view reason;
};

// The block of `cells` (one source's, strictly ascending dst), compressed.
// INVALID_ARGUMENT when a dst repeats or goes down, a status or verdict is
// not 0..255, or a reason is longer than 65,535 bytes; INTERNAL when zstd fails.
absl::StatusOr<std::string> EncodeCellBlock(absl::Span<const BlockCell> cells);

// Calls `fn` for each cell of a stored block (`data` as kept, `encoding` its
// column), in dst order, the cell's key fields taken from the row: run,
// rail, size, src. A non-OK return of fn stops and is returned. DATA_LOSS
// naming the reason when the block is damaged (bad frame, counts or lengths
// that do not add up).
// A block of cell_blocks_in (by_destination): its cells' node field is the
// source, the row's key the destination.
absl::Status DecodeCellBlock(int64_t encoding, std::string data, const CellRecord& key,
                             const std::function<absl::Status(const CellRecord&)>& fn,
                             bool by_destination = false);

}  // namespace gdrbench::server::store
