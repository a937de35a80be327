// Runs the preflight checks (all, or a chosen subset) and summarises them.
// Thread safety: RunPreflight may be called concurrently with different
// Contexts.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/preflight/report/report.h"
#include "agent/preflight/context.h"

namespace gdrbench::agent::preflight {

// `only` empty = every check. INVALID_ARGUMENT naming the unknown id and the
// known ones when `only` names a check that does not exist. A failing check
// is a result, never an error.
absl::StatusOr<Report> RunPreflight(Context& ctx, const std::vector<std::string>& only);

// Every check id, in report order.
std::vector<std::string> CheckIds();

}  // namespace gdrbench::agent::preflight
