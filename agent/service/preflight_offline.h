// The agent's one-shot modes for support tickets and tests:
//   gdrbench-agent preflight --fs-root DIR|FILE.tar.gz [--json] [--checks a,b]
//   gdrbench-agent capture --out FILE.tar.gz
// main.cc only fills these structs from flags; the run itself (trees,
// tarballs) is agent/preflight's RunPreflightAt.
// Thread safety: free functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/preflight/preflight.h"

namespace gdrbench::agent::service {

struct OfflinePreflightConfig {
  std::string fs_root = "/";        // a directory, or a capture tarball (.tar.gz/.tgz)
  bool json = false;                // the v1 PreflightReport as JSON
  bool verbose = false;             // text: the evidence of passing checks too
  preflight::RunOptions run;
};

struct OfflinePreflightOutput {
  std::string text;         // what to print on stdout
  bool any_failed = false;  // a check FAILed: exit 1
};

// Runs the checks once (preflight::RunPreflightAt) and renders the report.
// INVALID_ARGUMENT for an unknown check or a root that does not exist.
absl::StatusOr<OfflinePreflightOutput> RunPreflightOnce(const OfflinePreflightConfig& config);

// Captures this node (fs root "/") into `out`.
absl::Status CaptureNode(const std::string& out);

}  // namespace gdrbench::agent::service
