// What every subcommand shares: agent clients built from the common flags,
// JSON output of a v1 message, and the one-line error.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/cli/commands.h"
#include "controller/inventory/inventory.h"
#include "google/protobuf/message.h"

namespace gdrbench::controller::cli {

// The client config for `address` from the common flags: TLS, the RPC
// deadline, and a connect timeout of at most 3 s (an agent that is not there
// is reported within seconds).
AgentClientConfig ClientConfig(const std::string& address, const CommonOptions& common);
absl::StatusOr<std::unique_ptr<AgentClient>> ConnectAgent(const std::string& address,
                                                          const CommonOptions& common);

// A file named by a flag that cannot be read (NOT_FOUND, PERMISSION_DENIED)
// is bad usage, exit 2, like a malformed one: the command never started.
absl::Status UsageIfUnreadable(absl::Status status);

// inventory::LoadInventoryFile, a missing or unreadable file as bad usage.
absl::StatusOr<inventory::Inventory> LoadInventoryForCli(const std::string& path);

// `message` as JSON on stdout, with the proto's field names.
void PrintJson(const google::protobuf::Message& message);

}  // namespace gdrbench::controller::cli
