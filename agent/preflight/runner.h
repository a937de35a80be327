// Runs the preflight checks (all, or a chosen subset) and summarises them.
// RunPreflight runs them on the caller's thread; RunPreflightBounded on
// worker threads under deadlines (what every real run uses).
// Thread safety: RunPreflight may be called concurrently with different
// Contexts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/preflight/context.h"
#include "agent/preflight/results.h"
#include "common/limits.h"

namespace gdrbench::agent::preflight {

// `only` empty = every check. INVALID_ARGUMENT naming the unknown id and the
// known ones when `only` names a check that does not exist. A failing check
// is a result, never an error.
absl::StatusOr<Report> RunPreflight(Context& ctx, const std::vector<std::string>& only);

// Deadlines of a bounded run (common/limits.h).
struct Deadlines {
  absl::Duration check = absl::Milliseconds(limits::kPreflightCheckDeadlineMs);
  absl::Duration run = absl::Milliseconds(limits::kPreflightRunDeadlineMs);
};

// A fresh Context (and what it reads through) for one attempt; the pointer
// owns them all, since a hung attempt's thread keeps using its Context.
using ContextFactory = std::function<std::shared_ptr<Context>()>;

// RunPreflight with deadlines, for checks that can block forever in the
// kernel (a read of a hung driver file): the checks run on a worker thread;
// one that has not returned within `d.check` is reported FAIL as hung and
// its thread abandoned, and the checks after it run on a new thread with a
// new Context. When `d.run` has passed, the checks not run yet are SKIP.
// UNAVAILABLE while limits::kMaxStuckChecks abandoned checks of earlier
// runs are still blocked (each holds a thread).
absl::StatusOr<Report> RunPreflightBounded(const ContextFactory& make_context,
                                           const std::vector<std::string>& only, Deadlines d = {});

// Every check id, in report order.
std::vector<std::string> CheckIds();

}  // namespace gdrbench::agent::preflight
