// A received pair chunk checked as the ingest requires, and stored as it
// came: an upload's pair chunks arrive serialized (UploadRun reads them as
// bytes, POST /api/v1/runs replays them as bytes) and are kept compressed
// exactly as received (no re-serialization: issue 30, item 4). The bytes are
// parsed by protobuf's generated parser, the one every reader of the stored
// run uses, so what is checked is what is read:
//   * structure: whatever the parser accepts (unknown fields are kept in
//     the bytes, as the parser keeps them, and never shown); a proto3
//     string that is not UTF-8 fails the parse;
//   * of each pair (as parsed: a field given twice is merged as the parser
//     merges it): the src and dst node names valid (names.h), the status
//     one of ResultStatus's values, each of `sizes` a finite bw_avg_gbps
//     >= 0 and a finite bw_peak_gbps;
//   * every string field of each pair, at any depth (memory_halves
//     included): as run_fields.h's header strings (at most kMaxTextBytes, no
//     control character but tab and newline).
// Errors (INVALID_ARGUMENT: the client sent them):
//   "not a serialized gdrbench.v1.PairChunk (...)" when the parser refuses
//   the bytes, naming the first pair it refuses when that is one pair;
//   "pair 3: ..." (its index in the chunk) for what the ingest requires;
//   "the pair chunk from pair P: pairs[3].sizes[0].error ..." for a string
//   (P: the run's pairs before this chunk). A pair's own faults are reported
//   before any string's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gdrbench/v1/controller.pb.h"
#include "google/protobuf/arena.h"

namespace gdrbench::server::history {

// A parsed pair chunk checked as above. Returns the number of pairs.
absl::StatusOr<uint32_t> CheckPairChunk(const v1::PairChunk& chunk, uint64_t first_pair);

// Received bytes parsed into an arena (protobuf's: allocation is a pointer
// bump, freeing the chunk's messages one reset) whose first block is kept
// across chunks: a chunk of 1,024 pairs (1.4 MB parsed) needs no block of
// its own (only strings past 15 bytes still allocate their characters).
// Measured on 1,024-pair chunks of the server bench's run
// (bench/results/2026-12-06-server-store-3.txt): as fast as the
// wire-format walk this replaced where the ingest calls it (0.95 to 1.05 x),
// 1.1 to 1.4 x in a loop over chunks; 1.6 x as fast as one message cleared
// and parsed again (clearing every submessage costs more than the reset).
// Thread safety: one per upload; calls must not overlap (each may come from
// another thread: the arena is reset by the thread that parses).
class PairChunkCheck {
 public:
  PairChunkCheck();
  ~PairChunkCheck();
  // `bytes`: a serialized v1.PairChunk (the bytes of a RunChunk's `pairs`).
  // Returns the number of pairs.
  absl::StatusOr<uint32_t> Check(absl::string_view bytes, uint64_t first_pair);

 private:
  static constexpr size_t kFirstBlockBytes = 2 << 20;
  std::unique_ptr<char[]> first_block_;
  std::unique_ptr<google::protobuf::Arena> arena_;  // after the block it uses
};

// The serialized v1.PairChunk inside a serialized v1.RunChunk that is its
// `pairs` field alone, as every serializer writes it (a one-byte tag, the
// shortest length, the payload): a view into `run_chunk`. nullopt for
// anything else (another item or none, unknown fields, pairs given in
// pieces, a tag or length written long): the caller parses those whole.
// For the bytes it takes, the RunChunk parses exactly when the view parses
// as a PairChunk (fuzz_pair_chunk holds it to that).
std::optional<absl::string_view> SinglePairChunk(absl::string_view run_chunk);

}  // namespace gdrbench::server::history
