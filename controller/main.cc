// gdrbench: the controller CLI. main only maps flags to the option structs in
// controller/cli/commands.h and dispatches.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/logging.h"
#include "common/rpc/grpc_logging.h"
#include "common/version.h"
#include "controller/cli/commands.h"

namespace {

using gdrbench::controller::cli::CommonOptions;

void AddCommon(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--tls-ca", o.tls.ca_file, "PEM CA that signed the agents' certificates");
  cmd->add_option("--tls-cert", o.tls.cert_file, "PEM client certificate (mTLS)");
  cmd->add_option("--tls-key", o.tls.key_file, "PEM client key (mTLS)");
  cmd->add_option("--tls-server-name", o.tls.server_name,
                  "name to check in the agent's certificate instead of the host");
  cmd->add_flag("--insecure", o.tls.insecure, "talk plaintext to agents started with --insecure");
  cmd->add_option("--timeout-ms", o.timeout_ms, "deadline of each RPC")
      ->capture_default_str()
      ->check(CLI::Range(100, 3600 * 1000));
  cmd->add_flag("--json", o.json, "print the result as JSON (the v1 proto)");
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = gdrbench::controller::cli;
  CLI::App app{"gdrbench: GPUDirect RDMA cluster benchmark controller"};
  app.set_version_flag("--version", std::string(gdrbench::kVersion));
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();

  cli::NodeInfoOptions node_info;
  CLI::App* node_info_cmd = app.add_subcommand("node-info", "one node's GPUs, NICs and versions");
  node_info_cmd->add_option("--agent", node_info.agent, "agent HOST:PORT")->required();
  AddCommon(node_info_cmd, node_info.common);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (auto st = gdrbench::InitLogging(log_level); !st.ok()) return cli::PrintError(st);
  gdrbench::rpc::RouteGrpcLogsToSpdlog();
  if (*node_info_cmd) return cli::NodeInfoCommand(node_info);
  return 2;
}
