// gdrbench: the controller CLI. main only maps flags to the option structs in
// controller/cli/commands.h and dispatches.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/cli_exit.h"
#include "common/logging.h"
#include "common/rpc/grpc_logging.h"
#include "common/rpc/process_defaults.h"
#include "common/sweep_limits.h"
#include "common/version.h"
#include "controller/cli/commands.h"
#include "controller/cli/drain_command.h"
#include "controller/cli/flag_names.h"
#include "controller/cli/fleet_preflight.h"
#include "controller/cli/pair_command.h"
#include "controller/cli/server_commands.h"
#include "controller/cli/sweep_command.h"
#include "controller/cli/sweep_conflicts.h"
#include "controller/cli/sweep_flags.h"
#include "controller/cli/topology_command.h"
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

// The run and the policy, shared by `drain` and `resume` (one plan: the
// fraction guard applies to both).
void AddDrainFlags(CLI::App* cmd, gdrbench::controller::cli::DrainOptions& d) {
  auto* src = cmd->add_option_group("run", "the run (one of)");
  src->add_option("--run", d.run_file, "run.json of a sweep (gdrbench sweep --out DIR)");
  src->add_option("--server", d.server.address, "gdrbench-server's gRPC API, HOST:PORT");
  src->require_option(1);
  cmd->add_option("--run-id", d.run_id, "with --server: the run, or 'latest'")->capture_default_str();
  cmd->add_option("--cluster", d.cluster, "with --server --run-id latest: the cluster");
  gdrbench::controller::cli::AddServerConnectionFlags(cmd, d.server, "with --server: ", /*old_names=*/true);
  cmd->add_option("--what", d.what,
                  "what drains a node: node,nic,excluded,link (blame kinds; excluded: left out of the sweep)")
      ->capture_default_str();
  cmd->add_option("--max-fraction", d.max_fraction,
                  "refuse the whole run (drain, resume and write nothing) when it would drain more than "
                  "this fraction of its nodes")
      ->capture_default_str();
  cmd->add_option(
         "--min-streak", d.min_streak,
         "act on a node, nic or link blame that only read low once gdrbench-server counted it in this "
         "many consecutive runs of the cluster and a retest in its run confirmed it (hard failures and "
         "left-out nodes act at once; a run file with no streaks is acted on alone)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--verdicts", d.verdicts_dir,
                  "also write each node's verdict file (pass or drain) into DIR for the NHC check "
                  "(deploy/slurm/gdrbench_fabric.nhc); nothing is written for a refused run");
  cmd->add_option("--scontrol", d.scontrol, "the scontrol to run")->capture_default_str();
  cmd->add_option("--sacctmgr", d.sacctmgr, "the sacctmgr to ask for the caller's AdminLevel")
      ->capture_default_str();
  cmd->add_option("--on", d.on,
                  "slurm (scontrol: DRAIN / RESUME), or kubernetes (kubectl: the NoSchedule taint "
                  "gdrbench.io/fabric and the reason in an annotation, removed on resume)")
      ->capture_default_str();
  cmd->add_option("--kubectl", d.kubectl, "with --on kubernetes: the kubectl to run")->capture_default_str();
}

namespace cli = gdrbench::controller::cli;

// Every subcommand's options, and which one the command line named.
struct Commands {
  cli::NodeInfoOptions node_info;
  CLI::App* node_info_cmd = nullptr;
  cli::PreflightOptions preflight;
  cli::FleetPreflightOptions fleet;
  CLI::App* preflight_cmd = nullptr;
  cli::PairOptions pair;
  CLI::App* pair_cmd = nullptr;
  cli::SweepOptions sweep;
  CLI::App* sweep_cmd = nullptr;
  cli::ServerOptions server;
  std::function<int()> server_cmd;
  cli::TopologyOptions topology;
  std::function<int()> topology_cmd;
  cli::DrainOptions drain;
  CLI::App* drain_cmd = nullptr;
  cli::DrainOptions resume;
  CLI::App* resume_cmd = nullptr;
};

// `preflight`: one node (--agent) or a fleet.
void AddPreflightSubcommand(CLI::App& app, Commands& c) {
  c.preflight_cmd = app.add_subcommand(
      "preflight",
      "the GPUDirect RDMA checklist of one node (--agent), or of a fleet in parallel: a nodes x "
      "checks table and the versions that differ (exit 1 when a check FAILs)");
  CLI::App* preflight_cmd = c.preflight_cmd;
  auto* pf_nodes = preflight_cmd->add_option_group("nodes", "one node, or a fleet (one of)");
  pf_nodes->add_option("--agent", c.preflight.agent, "one agent HOST:PORT: its whole report");
  pf_nodes->add_option("--inventory", c.fleet.inventory, "a fleet: YAML inventory (docs/inventory.md)");
  pf_nodes->add_option("--agents", c.fleet.agents,
                       "a fleet: HOST:PORT,... (entries may be hostlists, or dns:NAME[:PORT])");
  pf_nodes->add_option("--hostlist", c.fleet.hostlist, "a fleet: Slurm hostlist (agents on --port)");
  pf_nodes->require_option(1);
  preflight_cmd->add_option("--port", c.fleet.port, "a fleet: agent port for entries without one")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  preflight_cmd->add_option("--parallel", c.fleet.parallel, "a fleet: nodes checked at once")
      ->capture_default_str()
      ->check(CLI::Range(1, static_cast<int>(gdrbench::sweep_limits::kMaxParallel)));
  preflight_cmd
      ->add_option("--checks", c.preflight.checks, "with --agent: only these checks (comma-separated ids)")
      ->delimiter(',');
  cli::AddExpectationFlags(preflight_cmd, c.fleet.expect);
  AddCommon(preflight_cmd, c.preflight.common);
}

// `pair`: one test between two agents.
void AddPairSubcommand(CLI::App& app, Commands& c) {
  cli::PairOptions& pair = c.pair;
  CLI::App* pair_cmd =
      app.add_subcommand("pair", "one RDMA WRITE bandwidth sweep between two agents' NICs");
  pair_cmd->add_option("--target", pair.server, "target agent HOST:PORT (the side written to)");
  pair_cmd->add_option("--initiator", pair.client, "initiator agent HOST:PORT (the side that writes)");
  pair_cmd->add_option("--target-device", pair.server_device, "target RDMA device");
  pair_cmd->add_option("--initiator-device", pair.client_device, "initiator RDMA device");
  pair_cmd->add_option("--target-bind", pair.server_bind, "target rdma_cm address");
  pair_cmd->add_option("--initiator-bind", pair.client_bind, "initiator rdma_cm source address");
  // The names before issue 32: --server is gdrbench-server in every other command.
  const std::string why = "--server names gdrbench-server in every other command";
  using gdrbench::controller::cli::AddOldName;
  AddOldName(pair_cmd, "--server", "--target", pair.server, why);
  AddOldName(pair_cmd, "--client", "--initiator", pair.client, why);
  AddOldName(pair_cmd, "--server-device", "--target-device", pair.server_device, why);
  AddOldName(pair_cmd, "--client-device", "--initiator-device", pair.client_device, why);
  AddOldName(pair_cmd, "--server-bind", "--target-bind", pair.server_bind, why);
  AddOldName(pair_cmd, "--client-bind", "--initiator-bind", pair.client_bind, why);
  pair_cmd
      ->add_option("--sweep-timeout", pair.sweep_timeout_s,
                   "deadline of the test's RunWriteSweep in seconds (as gdrbench sweep --sweep-timeout)")
      ->capture_default_str();
  pair_cmd->add_option("--lease", pair.lease_s, "target lease in seconds (0: sweep timeout + 60)");
  cli::AddSweepFlags(pair_cmd, pair.sweep, cli::SweepFlagSet::kPair);
  AddCommon(pair_cmd, pair.common);
  c.pair_cmd = pair_cmd;
}

// `drain` and `resume`.
void AddDrainSubcommands(CLI::App& app, Commands& c) {
  c.drain_cmd = app.add_subcommand(
      "drain",
      "drain the nodes a run blames in Slurm (scontrol update ... State=DRAIN); exit 3 when the "
      "run is over --max-fraction (nothing drained)");
  AddDrainFlags(c.drain_cmd, c.drain);
  c.drain_cmd->add_flag("--dry-run", c.drain.dry_run, "print the scontrol commands, run none");
  c.drain_cmd->add_option("--check", c.drain.check_node,
                          "only say whether NODE would be drained (exit 1 and the reason if so, 3 "
                          "when unknown: never a drain)");
  c.resume_cmd =
      app.add_subcommand("resume",
                         "return to service the nodes gdrbench drained that the run tested and passed "
                         "(scontrol update ... State=RESUME); others are never touched");
  AddDrainFlags(c.resume_cmd, c.resume);
  c.resume_cmd->add_flag("--dry-run", c.resume.dry_run, "print the scontrol commands, run none");
  c.resume_cmd->add_option("--sinfo", c.resume.sinfo, "the sinfo to run")->capture_default_str();
}

// `preflight`: the fleet's or one node's; the exit code.
int RunPreflight(Commands& c) {
  if (c.preflight.agent.empty()) {
    if (!c.preflight.checks.empty()) {
      return cli::PrintError(absl::InvalidArgumentError("--checks is for one node (--agent)"));
    }
    c.fleet.common = c.preflight.common;
    return cli::FleetPreflightCommand(c.fleet);
  }
  if (c.fleet.expect.controller_checks()) {
    return cli::PrintError(absl::InvalidArgumentError(
        "--expect-gpus, --expect-rails and --expect-link-* are checked over a fleet "
        "(--inventory, --agents or --hostlist; one node: --agents HOST:PORT)"));
  }
  c.preflight.expect = gdrbench::controller::run::AgentExpectations(c.fleet.expect);
  return cli::PreflightCommand(c.preflight);
}

// Runs the subcommand the command line named; the exit code.
int Dispatch(Commands& c) {
  if (*c.node_info_cmd) return cli::NodeInfoCommand(c.node_info);
  if (*c.pair_cmd) return cli::PairCommand(c.pair);
  if (*c.preflight_cmd) return RunPreflight(c);
  if (*c.sweep_cmd) {
    if (auto st = cli::CheckSweepFlagConflicts(c.sweep, *c.sweep_cmd); !st.ok()) return cli::PrintError(st);
    return cli::SweepCommand(c.sweep);
  }
  if (*c.drain_cmd) return cli::DrainCommand(c.drain);
  if (*c.resume_cmd) return cli::ResumeCommand(c.resume);
  if (c.server_cmd) return c.server_cmd();
  if (c.topology_cmd) return c.topology_cmd();
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench: GPUDirect RDMA cluster benchmark controller"};
  app.set_version_flag("--version", std::string(gdrbench::kVersion));
  app.require_subcommand(1);
  // Flags from a file: "[sweep]" then "key = value" lines (deploy/systemd/sweep.conf.example).
  app.set_config("--config", "", "read flags from a file ([SUBCOMMAND] sections of key = value)");
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();

  Commands c;
  c.node_info_cmd = app.add_subcommand("node-info", "one node's GPUs, NICs and versions");
  c.node_info_cmd->add_option("--agent", c.node_info.agent, "agent HOST:PORT")->required();
  AddCommon(c.node_info_cmd, c.node_info.common);
  AddPreflightSubcommand(app, c);
  AddPairSubcommand(app, c);
  c.sweep_cmd = cli::AddSweepSubcommand(app, c.sweep);
  cli::AddServerSubcommands(app, c.server, &c.server_cmd);
  cli::AddTopologySubcommands(app, c.topology, &c.topology_cmd);
  AddDrainSubcommands(app, c);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gdrbench::ExitOnParseError(app, e, "gdrbench", argc, argv);
  }
  if (auto st = gdrbench::InitLogging(log_level); !st.ok()) return cli::PrintError(st);
  gdrbench::rpc::DisableMutexDeadlockDetection();
  gdrbench::rpc::RouteGrpcLogsToSpdlog();
  return Dispatch(c);
}
