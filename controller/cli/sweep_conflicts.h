// `gdrbench sweep` flags that contradict each other or would be ignored
// (issue 32, Why 5): each is refused with one line naming both flags, instead
// of running with one of them silently dropped. And the TLS files a dry run
// would use, read as the sweep would read them.
#pragma once

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "controller/cli/sweep_command.h"

namespace gdrbench::controller::cli {

// INVALID_ARGUMENT for: --insecure with --tls-ca/--tls-cert/--tls-key;
// --json without --dry-run; --dry-run with --resume; --quick-rounds or --seed
// outside --mode quick; --fan-in outside --mode incast; --server-insecure,
// --server-tls-* or --cluster without --server, and --server-insecure with
// --server-tls-*. `cmd` is the parsed sweep subcommand (which flags were
// given, defaults aside).
absl::Status CheckSweepFlagConflicts(const SweepOptions& o, const CLI::App& cmd);

// The agents' TLS files (flags, else the inventory's tls:) and, with
// --server, the server's: read and checked as a sweep would, so --dry-run
// fails on the same missing CA file the sweep would. Errors name the flag or
// the inventory file and line that gave the file.
absl::Status CheckTlsFiles(const SweepOptions& o, const sweep::SweepConfig& c);

}  // namespace gdrbench::controller::cli
