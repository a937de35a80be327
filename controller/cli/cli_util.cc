#include "controller/cli/cli_util.h"

#include <algorithm>
#include <cstdio>

#include "controller/cli/exit_codes.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::cli {

int PrintError(const absl::Status& status) {
  std::string msg(status.message());
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "gdrbench: %s\n", msg.c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
}

absl::Status UsageIfUnreadable(absl::Status st) {
  if (absl::IsNotFound(st) || absl::IsPermissionDenied(st)) return absl::InvalidArgumentError(st.message());
  return st;
}

absl::StatusOr<inventory::Inventory> LoadInventoryForCli(const std::string& path) {
  auto inv = inventory::LoadInventoryFile(path);
  if (!inv.ok()) return UsageIfUnreadable(inv.status());
  return inv;
}

AgentClientConfig ClientConfig(const std::string& address, const CommonOptions& common) {
  AgentClientConfig cfg;
  cfg.address = address;
  cfg.tls = common.tls;
  cfg.rpc_timeout = std::chrono::milliseconds(common.timeout_ms);
  cfg.connect_timeout =
      std::min(cfg.rpc_timeout, std::chrono::milliseconds(sweep_limits::kDefaultConnectTimeoutMs));
  return cfg;
}

absl::StatusOr<std::unique_ptr<AgentClient>> ConnectAgent(const std::string& address,
                                                          const CommonOptions& common) {
  return AgentClient::Create(ClientConfig(address, common));
}

void PrintJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions jo;
  jo.add_whitespace = true;
  jo.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, jo);
  std::fputs(json.c_str(), stdout);
}

}  // namespace gdrbench::controller::cli
