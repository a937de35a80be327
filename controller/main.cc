// gdrbench: the controller CLI. main only maps flags to the option structs in
// controller/cli/commands.h and dispatches.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/cli_exit.h"
#include "common/logging.h"
#include "common/sweep_limits.h"
#include "common/rpc/grpc_logging.h"
#include "common/version.h"
#include "controller/cli/commands.h"
#include "controller/cli/drain_command.h"
#include "controller/cli/fleet_preflight.h"
#include "controller/cli/pair_command.h"
#include "controller/cli/sweep_command.h"
#include "controller/cli/sweep_flags.h"
#include "controller/cli/server_commands.h"
#include "controller/run/expectations.h"

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
      ->check(CLI::Range(gdrbench::sweep_limits::kMinRpcTimeoutMs, gdrbench::sweep_limits::kMaxRpcTimeoutMs));
  cmd->add_flag("--json", o.json, "print the result as JSON (the v1 proto)");
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = gdrbench::controller::cli;
  CLI::App app{"gdrbench: GPUDirect RDMA cluster benchmark controller"};
  app.set_version_flag("--version", std::string(gdrbench::kVersion));
  app.require_subcommand(1);
  // Flags from a file: "[sweep]" then "key = value" lines (deploy/systemd/sweep.conf.example).
  app.set_config("--config", "", "read flags from a file ([SUBCOMMAND] sections of key = value)");
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();

  cli::NodeInfoOptions node_info;
  CLI::App* node_info_cmd = app.add_subcommand("node-info", "one node's GPUs, NICs and versions");
  node_info_cmd->add_option("--agent", node_info.agent, "agent HOST:PORT")->required();
  AddCommon(node_info_cmd, node_info.common);

  cli::PreflightOptions preflight;
  cli::FleetPreflightOptions fleet;
  CLI::App* preflight_cmd = app.add_subcommand(
      "preflight",
      "the GPUDirect RDMA checklist of one node (--agent), or of a fleet in parallel: a nodes x "
      "checks table and the versions that differ (exit 1 when a check FAILs)");
  auto* pf_nodes = preflight_cmd->add_option_group("nodes", "one node, or a fleet (one of)");
  pf_nodes->add_option("--agent", preflight.agent, "one agent HOST:PORT: its whole report");
  pf_nodes->add_option("--inventory", fleet.inventory, "a fleet: YAML inventory (docs/inventory.md)");
  pf_nodes->add_option("--agents", fleet.agents,
                       "a fleet: HOST:PORT,... (entries may be hostlists, or dns:NAME[:PORT])");
  pf_nodes->add_option("--hostlist", fleet.hostlist, "a fleet: Slurm hostlist (agents on --port)");
  pf_nodes->require_option(1);
  preflight_cmd->add_option("--port", fleet.port, "a fleet: agent port for entries without one")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  preflight_cmd->add_option("--parallel", fleet.parallel, "a fleet: nodes checked at once")
      ->capture_default_str()
      ->check(CLI::Range(1, static_cast<int>(gdrbench::sweep_limits::kMaxParallel)));
  preflight_cmd->add_option("--checks", preflight.checks,
                            "with --agent: only these checks (comma-separated ids)")
      ->delimiter(',');
  cli::AddExpectationFlags(preflight_cmd, fleet.expect);
  AddCommon(preflight_cmd, preflight.common);

  cli::PairOptions pair;
  CLI::App* pair_cmd =
      app.add_subcommand("pair", "one RDMA WRITE bandwidth sweep between two agents' NICs");
  pair_cmd->add_option("--server", pair.server, "target agent HOST:PORT")->required();
  pair_cmd->add_option("--client", pair.client, "initiator agent HOST:PORT")->required();
  pair_cmd->add_option("--server-device", pair.server_device, "target RDMA device");
  pair_cmd->add_option("--client-device", pair.client_device, "initiator RDMA device");
  pair_cmd->add_option("--server-bind", pair.server_bind, "target rdma_cm address");
  pair_cmd->add_option("--client-bind", pair.client_bind, "initiator rdma_cm source address");
  pair_cmd->add_option("--sweep-timeout", pair.sweep_timeout_s, "seconds for the whole sweep")
      ->capture_default_str();
  pair_cmd->add_option("--lease", pair.lease_s, "target lease in seconds (0: sweep timeout + 60)");
  cli::AddSweepFlags(pair_cmd, pair.sweep, cli::SweepFlagSet::kPair);
  AddCommon(pair_cmd, pair.common);

  cli::SweepOptions sweep;
  CLI::App* sweep_cmd = cli::AddSweepSubcommand(app, sweep);
  cli::ServerOptions server;
  std::function<int()> server_cmd;
  cli::AddServerSubcommands(app, server, &server_cmd);

  cli::DrainOptions drain;
  CLI::App* drain_cmd = app.add_subcommand(
      "drain", "drain the nodes a run blames in Slurm (scontrol update ... State=DRAIN)");
  auto* drain_src = drain_cmd->add_option_group("run", "the run (one of)");
  drain_src->add_option("--run", drain.run_file, "run.json of a sweep (gdrbench sweep --out DIR)");
  drain_src->add_option("--server", drain.server.address, "gdrbench-server's gRPC API, HOST:PORT");
  drain_src->require_option(1);
  drain_cmd->add_option("--run-id", drain.run_id, "with --server: the run, or 'latest'")
      ->capture_default_str();
  drain_cmd->add_option("--cluster", drain.cluster, "with --server --run-id latest: the cluster");
  drain_cmd->add_option("--token-file", drain.server.token_file, "with --server: file holding a read token")
      ->envname("GDRBENCH_TOKEN_FILE");
  drain_cmd->add_option("--tls-ca", drain.server.tls.ca_file, "with --server: PEM CA of the server's certificate");
  drain_cmd->add_option("--tls-cert", drain.server.tls.cert_file, "with --server: PEM client certificate");
  drain_cmd->add_option("--tls-key", drain.server.tls.key_file, "with --server: PEM client key");
  drain_cmd->add_option("--tls-server-name", drain.server.tls.server_name,
                        "with --server: name to check in its certificate");
  drain_cmd->add_flag("--insecure", drain.server.tls.insecure, "with --server: plaintext");
  drain_cmd->add_option("--what", drain.what,
                        "what drains a node: node,nic,excluded,link (blame kinds; excluded: left "
                        "out of the sweep)")
      ->capture_default_str();
  drain_cmd->add_option("--max-fraction", drain.max_fraction,
                        "refuse to drain more than this fraction of the run's nodes")
      ->capture_default_str();
  drain_cmd->add_flag("--dry-run", drain.dry_run, "print the scontrol commands, run none");
  drain_cmd->add_option("--check", drain.check_node,
                        "only say whether NODE would be drained (exit 1 and the reason if so)");
  drain_cmd->add_option("--scontrol", drain.scontrol, "the scontrol to run")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gdrbench::ExitOnParseError(app, e, "gdrbench");
  }
  if (auto st = gdrbench::InitLogging(log_level); !st.ok()) return cli::PrintError(st);
  gdrbench::rpc::RouteGrpcLogsToSpdlog();
  if (*node_info_cmd) return cli::NodeInfoCommand(node_info);
  if (*pair_cmd) return cli::PairCommand(pair);
  if (*preflight_cmd && preflight.agent.empty()) {
    if (!preflight.checks.empty()) {
      return cli::PrintError(absl::InvalidArgumentError("--checks is for one node (--agent)"));
    }
    fleet.common = preflight.common;
    return cli::FleetPreflightCommand(fleet);
  }
  if (*preflight_cmd) {
    if (fleet.expect.controller_checks()) {
      return cli::PrintError(absl::InvalidArgumentError(
          "--expect-gpus, --expect-rails and --expect-link-* are checked over a fleet "
          "(--inventory, --agents or --hostlist; one node: --agents HOST:PORT)"));
    }
    preflight.expect = gdrbench::controller::run::AgentExpectations(fleet.expect);
    return cli::PreflightCommand(preflight);
  }
  if (*sweep_cmd) return cli::SweepCommand(sweep);
  if (*drain_cmd) return cli::DrainCommand(drain);
  if (server_cmd) return server_cmd();
  return 2;
}
