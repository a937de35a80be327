// A run in pieces, as gdrbench-server's UploadRun and ExportRun carry it
// (proto/gdrbench/v1/controller.proto, RunChunk): the header (the run
// without pairs and without its matrices' cells), then each matrix's cells
// in chunks, then the pairs in chunks. No chunk holds the whole run, so a
// 1024-node x 8-rail run (8.4 M cells) moves in bounded messages.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <functional>

#include "absl/status/status.h"
#include "gdrbench/v1/controller.pb.h"

namespace gdrbench::report {

struct ChunkSizes {
  size_t cells = 16384;   // MatrixCell per chunk (~0.5 MB)
  size_t pairs = 1024;    // PairResult per chunk
};

// The header: `run` without pairs and matrix cells.
v1::Run RunHeader(const v1::Run& run);

// Calls `fn` for the header, then cell and pair chunks. Stops at (and
// returns) the first error `fn` returns.
absl::Status ForEachRunChunk(const v1::Run& run, const ChunkSizes& sizes,
                             const std::function<absl::Status(const v1::RunChunk&)>& fn);

}  // namespace gdrbench::report
