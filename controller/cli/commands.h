// The gdrbench subcommands, each a function of a config struct that main.cc
// fills from flags. Each returns the process exit code and prints any error
// as one line on stderr.
#pragma once

#include <string>

#include "controller/client/agent_client.h"

namespace gdrbench::controller::cli {

struct CommonOptions {
  rpc::ClientTlsConfig tls;
  int timeout_ms = 10000;
  bool json = false;
};

struct NodeInfoOptions {
  CommonOptions common;
  std::string agent;  // HOST:PORT
};

int NodeInfoCommand(const NodeInfoOptions& options);

// Prints "gdrbench: <message>" on stderr and returns 1 (2 for bad usage).
int PrintError(const absl::Status& status);

}  // namespace gdrbench::controller::cli
