// The gdrbench subcommands, each a function of a config struct that main.cc
// fills from flags. Each returns the process exit code and prints any error
// as one line on stderr.
#pragma once

#include <string>
#include <vector>

#include "common/sweep_limits.h"
#include "controller/client/agent_client.h"

namespace gdrbench::controller::cli {

struct CommonOptions {
  rpc::ClientTlsConfig tls;
  int timeout_ms = sweep_limits::kDefaultRpcTimeoutMs;
  bool json = false;
};

struct NodeInfoOptions {
  CommonOptions common;
  std::string agent;  // HOST:PORT
};

int NodeInfoCommand(const NodeInfoOptions& options);

struct PreflightOptions {
  CommonOptions common;
  std::string agent;                // HOST:PORT
  std::vector<std::string> checks;  // empty = all
  v1::PreflightExpectations expect;
};

// Exit code 0 when no check FAILs (WARN and SKIP allowed), 1 when one does.
int PreflightCommand(const PreflightOptions& options);

// Prints "gdrbench: <message>" on stderr and returns kExitUsage (2) for
// INVALID_ARGUMENT, else kExitError (4): the command could not run or finish
// (controller/cli/exit_codes.h).
int PrintError(const absl::Status& status);

}  // namespace gdrbench::controller::cli
