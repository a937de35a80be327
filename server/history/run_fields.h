// The string fields of an uploaded run's header, and its preflight reports,
// checked before anything is stored (issue 31, item 5): they reach logs,
// the dashboard and /metrics labels.
//   * every string field of the header, at any depth: at most
//     kMaxTextBytes, and no control character but tab and newline (no NUL,
//     CR, DEL, \x01, ...); ids and names are checked more strictly below;
//   * mode: empty or up to 64 characters of A-Z a-z 0-9 - _ . :
//   * preflight: at most one report per node of the run (a node of its
//     matrices, or one it excluded: the name before ": " in
//     excluded_nodes), each hostname 1 to 253 printable characters, at
//     most kMaxChecks checks with distinct ids of 1 to 64 characters of
//     A-Z a-z 0-9 - _ . : (/metrics shows only the reports of the run's
//     own nodes: at most nodes x kMaxChecks series);
//   * excluded_nodes: each names a node as node names are checked.
// Errors: INVALID_ARGUMENT with a sentence naming the field.
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/descriptor.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::server::history {

inline constexpr size_t kMaxTextBytes = 16 << 10;
inline constexpr int kMaxChecks = 64;

absl::Status ValidateRunFields(const v1::Run& header);

// Every string field, at any depth, of `bytes`, a serialized message of type
// `type` (the pair chunks of an upload, walked in their wire format: no
// reflection per pair, so 8 M pairs cost a scan of their bytes): as the
// header's strings, at most kMaxTextBytes and no control character but tab
// and newline. INVALID_ARGUMENT naming the field path ("pairs[3].sizes[0].
// error"); DATA_LOSS when the bytes are not that message.
absl::Status ValidateSerializedStrings(const google::protobuf::Descriptor* type, std::string_view bytes);
// One string of a cell or another field checked by hand: as above.
absl::Status ValidateText(const std::string& value, const std::string& where);

// The run's nodes: its matrices' and the names of excluded_nodes ("NODE:
// reason"; an entry without ": " names none).
std::set<std::string> RunNodeNames(const v1::Run& header);
// 1 to 64 characters of A-Z a-z 0-9 - _ . : (a preflight check id).
bool ValidCheckId(const std::string& id);

}  // namespace gdrbench::server::history
