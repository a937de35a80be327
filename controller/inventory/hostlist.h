// Slurm hostlist expressions: "node[01-16]", "gpu[1-3,7],login1",
// "rack[1-2]-n[01-04]" (several bracket groups expand as a cartesian product,
// leftmost group outermost). Zero padding follows the lower bound of each
// range ("[08-10]" -> 08 09 10). Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::controller::inventory {

// The host names of `expression`, in order, duplicates kept.
// INVALID_ARGUMENT naming the offending part for: an empty expression or
// element, unbalanced brackets, a range whose bounds are not decimal or whose
// lower bound exceeds the upper one, or more than `max_hosts` names.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view expression,
                                                        size_t max_hosts = 1 << 20);

// Splits at commas that are not inside brackets: "a[1,2],b" -> {"a[1,2]", "b"}.
std::vector<std::string> SplitTopLevel(absl::string_view expression);

}  // namespace gdrbench::controller::inventory
