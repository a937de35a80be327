#include <cstdio>

#include "controller/cli/commands.h"
#include "controller/cli/node_info_table.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::cli {

int PrintError(const absl::Status& status) {
  std::string msg(status.message());
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "gdrbench: %s\n", msg.c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

int NodeInfoCommand(const NodeInfoOptions& options) {
  AgentClientConfig cfg;
  cfg.address = options.agent;
  cfg.tls = options.common.tls;
  cfg.rpc_timeout = std::chrono::milliseconds(options.common.timeout_ms);
  cfg.connect_timeout = std::min(cfg.rpc_timeout, std::chrono::milliseconds(3000));
  auto client = AgentClient::Create(cfg);
  if (!client.ok()) return PrintError(client.status());
  auto info = (*client)->GetNodeInfo();
  if (!info.ok()) return PrintError(info.status());
  if (options.common.json) {
    std::string json;
    google::protobuf::util::JsonPrintOptions jo;
    jo.add_whitespace = true;
    jo.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(*info, &json, jo);
    std::fputs(json.c_str(), stdout);
  } else {
    std::fputs(FormatNodeInfo(*info).c_str(), stdout);
  }
  return 0;
}

}  // namespace gdrbench::controller::cli
