// The ids and names gdrbench-server accepts, one rule each, shared by the
// API's requests (server/api/handler.cc) and an upload's ingest (ingest.cc,
// run_fields.cc), so a name one of them stores the other can ask for:
//   * run id: 1 to 128 of A-Z a-z 0-9 - _ . :
//   * cluster name: 1 to 64 of the same (empty: the default cluster, where
//     the caller allows it);
//   * node name: 1 to 253 printable characters (a DNS name's length; no
//     control character), as hostnames and inventories spell them;
//   * check id, mode: 1 to 64 of A-Z a-z 0-9 - _ . :
// Errors: INVALID_ARGUMENT naming the field and the rule.
// Thread safety: pure.
#pragma once

#include <cstddef>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace gdrbench::server::history {

inline constexpr size_t kMaxRunIdChars = 128;
inline constexpr size_t kMaxClusterChars = 64;
inline constexpr size_t kMaxNodeNameChars = 253;
inline constexpr size_t kMaxIdChars = 64;  // check ids, modes

// 1 to `max` characters of A-Z a-z 0-9 - _ . :
bool IdChars(absl::string_view s, size_t max);
// No byte below 0x20 and no DEL.
bool Printable(absl::string_view s);
bool ValidNodeName(absl::string_view n);

// `field` 'value' is not a run id (1 to 128 of A-Z a-z 0-9 - _ . :)
absl::Status CheckRunId(absl::string_view id, absl::string_view field);
// Empty is accepted unless `required`.
absl::Status CheckClusterName(absl::string_view c, absl::string_view field, bool required);
// `where`: node name 'value' must be 1 to 253 printable characters
absl::Status CheckNodeName(absl::string_view n, absl::string_view where);

}  // namespace gdrbench::server::history
