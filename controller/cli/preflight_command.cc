// gdrbench preflight --agent HOST:PORT [--json] [--checks a,b]
#include <algorithm>
#include <cstdio>

#include "controller/cli/commands.h"
#include "controller/cli/preflight_table.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::cli {

int PreflightCommand(const PreflightOptions& options) {
  AgentClientConfig cfg;
  cfg.address = options.agent;
  cfg.tls = options.common.tls;
  cfg.rpc_timeout = std::chrono::milliseconds(options.common.timeout_ms);
  cfg.connect_timeout = std::min(cfg.rpc_timeout, std::chrono::milliseconds(3000));
  auto client = AgentClient::Create(cfg);
  if (!client.ok()) return PrintError(client.status());
  v1::RunPreflightRequest request;
  for (const auto& c : options.checks) request.add_checks(c);
  *request.mutable_expectations() = options.expect;
  auto report = (*client)->RunPreflight(request);
  if (!report.ok()) return PrintError(report.status());
  if (options.common.json) {
    std::string json;
    google::protobuf::util::JsonPrintOptions jo;
    jo.add_whitespace = true;
    jo.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(*report, &json, jo);
    std::fputs(json.c_str(), stdout);
  } else {
    std::fputs(FormatPreflight(*report).c_str(), stdout);
  }
  return report->overall() == v1::CHECK_STATUS_FAIL ? 1 : 0;
}

}  // namespace gdrbench::controller::cli
