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
#include "absl/strings/string_view.h"
#include "gdrbench/v1/run.pb.h"
#include "google/protobuf/descriptor.h"

namespace gdrbench::server::history {

inline constexpr size_t kMaxTextBytes = 16 << 10;
inline constexpr int kMaxChecks = 64;

absl::Status ValidateRunFields(const v1::Run& header);

// One string of a cell or another field checked by hand (and each string of
// a pair chunk, pair_check.h): at most kMaxTextBytes and no control
// character but tab and newline.
absl::Status ValidateText(absl::string_view value, absl::string_view where);
// True when ValidateText would accept `value`: the common case, told without
// building a Status or a field name (pair_check.h asks it of 8 M pairs'
// strings).
bool IsPlainText(absl::string_view value);

// The run's nodes: its matrices' and the names of excluded_nodes ("NODE:
// reason"; an entry without ": " names none).
std::set<std::string> RunNodeNames(const v1::Run& header);
// 1 to 64 characters of A-Z a-z 0-9 - _ . : (a preflight check id).
bool ValidCheckId(const std::string& id);

}  // namespace gdrbench::server::history
