// The one entry point to a preflight run, live or offline:
//   - RunPreflightAt("/"): this node, with live hardware (libibverbs, libcuda,
//     a real one-page registration, a short GPU load, /dev/kmsg);
//   - RunPreflightAt(DIR): a captured tree; live-only checks SKIP;
//   - RunPreflightAt(FILE.tar.gz|.tgz): a capture tarball (gdrbench-agent
//     capture), unpacked into a private temporary directory that is removed
//     before returning; the report names the tarball.
// Every caller (the RunPreflight RPC, `gdrbench-agent preflight`,
// `gdrbench-preflight`) comes through here.
// Thread safety: may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/counters/counter_history.h"
#include "agent/preflight/expectations.h"
#include "agent/preflight/results.h"
#include "agent/preflight/runner.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

struct RunOptions {
  std::vector<std::string> checks;   // empty = every check
  Expectations expect;
  // The RDMA devices this agent owns (--devices), empty = all. The RDMA and
  // topology checks look at those only, they are rails, and one that is
  // absent FAILs rdma_devices.
  std::vector<std::string> devices;
  // Live only: the time between the two reads of the link error counters.
  absl::Duration counter_interval = absl::Seconds(1);
  // Live only: the agent's background counter samples; with one at least
  // `counter_interval` old for every port, the check does not wait (shared:
  // a hung check's thread may outlive the call).
  std::shared_ptr<const counters::CounterHistory> counter_history;
  // Live only: load every GPU for the PCIe link check, not only the ones
  // whose link reads below its maximum speed.
  bool load_all_gpu_links = false;
  // Per check and per run: a check blocked in the kernel is reported hung.
  Deadlines deadlines;
};

// INVALID_ARGUMENT for an unknown check id, a root that does not exist, or a
// regular file that is not a .tar.gz/.tgz capture; the extraction's error
// for a tarball that cannot be unpacked.
absl::StatusOr<Report> RunPreflightAt(const std::string& fs_root_or_tarball, const RunOptions& options);

// The same on an FsRoot the caller holds (the agent's own, tests' trees).
absl::StatusOr<Report> RunPreflightOn(const FsRoot& fs, const RunOptions& options);

}  // namespace gdrbench::agent::preflight
