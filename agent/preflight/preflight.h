// The one-call entry point: run the checks against a filesystem root with the
// matching hardware (live on "/", sysfs/offline elsewhere).
// Thread safety: may be called concurrently.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/preflight/check.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

// INVALID_ARGUMENT for an unknown check id in `only` (empty = all).
// `devices` (empty = all): the RDMA devices this agent owns; the RDMA and
// topology checks look at those only, and one that is absent FAILs
// rdma_devices.
absl::StatusOr<Report> RunPreflightOn(const FsRoot& fs, const std::vector<std::string>& only,
                                      const Expectations& expect,
                                      const std::vector<std::string>& devices = {});

}  // namespace gdrbench::agent::preflight
