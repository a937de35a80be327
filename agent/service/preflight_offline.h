// The agent's one-shot modes for support tickets and tests:
//   gdrbench-agent preflight --fs-root DIR|FILE.tar.gz [--json] [--checks a,b]
//   gdrbench-agent capture --out FILE.tar.gz
// main.cc only fills these structs from flags.
// Thread safety: free functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/preflight/check.h"

namespace gdrbench::agent::service {

struct OfflinePreflightConfig {
  std::string fs_root = "/";        // a directory, or a capture tarball (.tar.gz/.tgz)
  bool json = false;                // the v1 PreflightReport as JSON
  std::vector<std::string> checks;  // empty = all
  preflight::Expectations expect;
};

struct OfflinePreflightOutput {
  std::string text;         // what to print on stdout
  bool any_failed = false;  // a check FAILed: exit 1
};

// Runs the checks once. Against "/" the live hardware is used; against a
// tree or tarball the live-only checks SKIP with the reason.
// INVALID_ARGUMENT for an unknown check or a root that does not exist.
absl::StatusOr<OfflinePreflightOutput> RunPreflightOnce(const OfflinePreflightConfig& config);

// Captures this node (fs root "/") into `out`.
absl::Status CaptureNode(const std::string& out);

}  // namespace gdrbench::agent::service
