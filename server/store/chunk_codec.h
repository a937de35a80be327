// How a run's pair chunks (run_pairs.data) are kept: a serialized v1.PairChunk
// compressed with zstd (level 1). A 1024-node x 8-rail run's 8.4 M pair
// results are 1.6 GB serialized and about a fourteenth of that compressed
// (repeated node names, addresses, NICs and perftest command lines): the
// store writes and keeps that much less, and ingest spends its time on
// compression (about 0.5 GB/s per core here) instead of on writing
// (bench/results/2026-12-04-server-store.txt). Rows stored before schema
// version 4 are plain serialized chunks (encoding 0) and read as they are.
// Thread safety: the functions are thread-safe (a context per thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::server::store {

enum class ChunkEncoding : int64_t { kRaw = 0, kZstd = 1 };

// The largest chunk a stored row may decompress to (a chunk arrives in one
// upload message, far below this); a row that claims more is refused.
constexpr size_t kMaxChunkBytes = size_t{256} << 20;

// `raw` compressed for storage (kZstd). INTERNAL when zstd fails.
absl::StatusOr<std::string> CompressChunk(std::string_view raw);

// A stored row's data back as the serialized chunk. DATA_LOSS naming the
// reason for an unknown encoding, a frame that is not zstd, is truncated,
// claims more than kMaxChunkBytes or does not decompress to its size.
absl::StatusOr<std::string> DecodeChunk(int64_t encoding, std::string data);

// The same for any value kept this way (cell_block.h), the messages
// starting with `what`.
absl::StatusOr<std::string> DecodeStored(int64_t encoding, std::string data, absl::string_view what);

}  // namespace gdrbench::server::store
