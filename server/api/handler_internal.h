// Request checks shared by the Handler's files (handler*.cc), one per
// resource. Not part of the API.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gdrbench::server::api::internal {

// INVALID_ARGUMENT with `s`.
absl::Status Bad(absl::string_view s);
// A node name (history::CheckNodeName); empty is an error only if `required`.
absl::Status CheckNode(const std::string& n, const char* field, bool required);
// Microseconds since the epoch `days` ago; 0 (no bound) for 0 days.
int64_t DaysAgoMicros(uint32_t days);

}  // namespace gdrbench::server::api::internal
