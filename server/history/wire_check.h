// Serialized messages checked in their wire format, without parsing them
// (https://protobuf.dev/programming-guides/encoding/): an upload's pair
// chunks arrive serialized and are stored as they came (compressed), so
// 8 M pairs cost one scan of their bytes instead of a parse, a
// re-serialization and a scan (issue 30, item 4).
//
// The scan accepts what protobuf's parser (3.21, proto3) accepts and checks
// what the ingest checks of a parsed message:
//   * structure: every tag and length within the bytes, varints of at most
//     10 bytes, no field number 0, no groups (proto3 has none), each known
//     message field (at any depth, at most 32 deep) itself such a message,
//     each known packed field whole; a field number the type does not have,
//     or a known number with another wire type, is an unknown field (kept
//     as it came, never shown), as the parser keeps it;
//   * every known string field: UTF-8 (as the parser requires of proto3
//     strings), then as run_fields.h's header strings (at most kMaxTextBytes,
//     no control character but tab and newline).
// Errors: DATA_LOSS "not a serialized message" when the structure is not
// one; INVALID_ARGUMENT naming the field path ("pairs[3].sizes[0].error")
// for a string.
// Thread safety: thread-safe (each thread builds its own plans).
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"

namespace gdrbench::server::history {

// `bytes` as a serialized message of `type`, checked as above.
absl::Status ValidateSerializedMessage(const google::protobuf::Descriptor* type, absl::string_view bytes);

// A received pair chunk (the bytes of a v1.RunChunk's `pairs`, a serialized
// v1.PairChunk): ValidateSerializedMessage, and of each pair what the ingest
// requires (as a parsed pair would read: the last value of a field repeated
// in the bytes): the src and dst node names valid (names.h), the status one
// of ResultStatus's values, and each of `sizes` a finite bw_avg_gbps >= 0 and
// a finite bw_peak_gbps. Returns the number of pairs.
// INVALID_ARGUMENT naming the pair ("pair 3: ...", its index in the chunk)
// and the field, or for a string "the pair chunk from pair <first_pair>:
// pairs[3].reason ..." (first_pair: the run's pairs before this chunk); a
// structure that is not a pair chunk is INVALID_ARGUMENT too ("not a
// serialized gdrbench.v1.PairChunk"): the client sent it.
absl::StatusOr<uint32_t> CheckPairChunk(absl::string_view bytes, uint64_t first_pair);

// The serialized v1.PairChunk inside a serialized v1.RunChunk whose item is
// `pairs` given once, as every serializer writes it: a view into
// `run_chunk`. nullopt for anything else (another item or none, pairs given
// in pieces that a parser would merge, bytes that are not a message): the
// caller parses those.
std::optional<absl::string_view> SinglePairChunk(absl::string_view run_chunk);

}  // namespace gdrbench::server::history
