// The flags of `gdrbench sweep` (kept beside the command so main.cc gains
// one line per subcommand); defaults and bounds from common/sweep_limits.h.
#include "controller/cli/flag_names.h"
#include "controller/cli/sweep_command.h"

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::cli {

namespace limits = sweep_limits;

void AddExpectationFlags(CLI::App* c, inventory::Expectations& e) {
  c->add_option_function<uint32_t>("--expect-gpus", [&e](uint32_t v) { e.gpus = v; },
                                   "fleet expectation: GPUs per node");
  c->add_option_function<uint32_t>("--expect-rails", [&e](uint32_t v) { e.rails = v; },
                                   "fleet expectation: rails (rail NICs) per node");
  c->add_option_function<double>("--expect-link-gbps", [&e](double v) { e.link_gbps = v; },
                                 "fleet expectation: every rail's link at least this rate (Gb/s)");
  c->add_option("--expect-link-state", e.link_state, "fleet expectation: every rail's port state")
      ->check(CLI::IsMember({"PORT_ACTIVE", "PORT_DOWN", "PORT_INIT", "PORT_ARMED"}));
  c->add_option("--expect-driver", e.nvidia_driver, "pinned NVIDIA driver version (\"580\" pins a branch)");
  c->add_option("--expect-cuda", e.cuda_driver, "pinned CUDA driver API version, e.g. 13.0");
  c->add_option("--expect-rdma-core", e.rdma_core, "pinned rdma-core version");
  c->add_option("--expect-ofed", e.ofed, "pinned MLNX_OFED/DOCA version");
  c->add_option("--expect-firmware", e.hca_firmware, "pinned HCA firmware, e.g. 28.39.1002 (its family's NICs)");
  c->add_option("--min-mtu", e.min_mtu_bytes, "fail ports whose active RDMA MTU is below this (bytes)");
}

namespace {

// Where the nodes come from (exactly one source), and the agents' port.
void AddNodeFlags(CLI::App* c, SweepOptions& o) {
  auto* src = c->add_option_group("nodes", "where the nodes come from (one of)");
  src->add_option("--inventory", o.inventory, "YAML inventory (nodes, rails, link rate, TLS)");
  src->add_option("--agents", o.agents,
                 "HOST:PORT,... (entries may be hostlists: node[1-4]:7000, or dns:NAME[:PORT]: one node per A/AAAA record, named by its agent)");
  src->add_option("--hostlist", o.hostlist, "Slurm hostlist, e.g. node[01-16] (agents on --port)");
  src->require_option(1);
  // An empty value is an error of that flag (`--agents ''` used to blame --hostlist).
  for (CLI::Option* opt : src->get_options()) {
    opt->check([](const std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); });
  }
  c->add_option("--port", o.port, "agent port for --hostlist/--agents entries without one")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
}

// The schedule.
void AddScheduleFlags(CLI::App* c, SweepOptions& o) {
  c->add_option(
       "--mode", o.mode,
       "all-pairs | quick | ring | pairs | incast | cross-rail | cover | shift (cover, shift: planned on "
       "--topology's cables)")
      ->capture_default_str();
  c->add_option(
      "--topology", o.topology,
      "--mode cover | shift: ibnetdiscover output, iblinkinfo --line output, or a directory of NAME.json "
      "(lldpctl -f json on NAME); the rails are matched to its host ports (gdrbench topology show)");
  c->add_option("--topology-format", o.topology_format, "auto, ibnetdiscover, iblinkinfo or lldp")
      ->capture_default_str();
  c->add_option(
       "--routing", o.routing,
       "--mode cover | shift: ftree (each flow's cables known: OpenSM fat-tree routing) or ecmp (spread by "
       "hash: rounds until each uplink carried a flow with --ecmp-confidence)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ftree", "ecmp"}));
  c->add_option("--ecmp-confidence", o.ecmp_confidence,
                "--routing ecmp: each uplink loaded with this probability")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  c->add_option(
      "--cable-counters", o.cable_counters,
      "--mode cover | shift: a shell command that prints the switch ports' counters as JSON "
      "({\"ports\": [{\"device\", \"port\", \"tx_bytes\", \"rx_bytes\", ...}]}, docs/topology.md); run "
      "before the "
      "first test and after the last: a loaded cable whose counters did not move, or whose errors grew, "
      "is reported");
  c->add_option("--max-fabric-rounds", o.max_fabric_rounds,
                "--mode cover: stop adding rounds here; the cables left are listed")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  c->add_option("--fan-in", o.fan_in,
                "--mode incast: K senders write to one target at once (1 <= K < nodes); every node is a target");
  c->add_option("--pairs", o.pairs_file, "pair list file for --mode pairs: 'SRC DST' per line");
  c->add_option("--quick-rounds", o.quick_rounds, "random perfect matchings in --mode quick")
      ->capture_default_str()
      ->check(CLI::Range(1, static_cast<int>(limits::kMaxQuickRounds)));
  c->add_option("--quick-seed", o.schedule_seed, "seed of --mode quick's matchings")->capture_default_str();
  AddOldName(c, "--seed", "--quick-seed", o.schedule_seed,
             "--seed is the verify pattern's seed in gdrbench pair");
  c->add_option("--max-concurrent", o.max_concurrent,
                "at most this many tests per round (oversubscribed fabrics); 0 = no cap")
      ->capture_default_str();
}

// The test parameters (defaults and bounds: common/sweep_limits.h) and the memory kinds.
void AddTestFlags(CLI::App* c, SweepOptions& o) {
  AddSweepFlags(c, o.sweep, SweepFlagSet::kSweep);
  c->add_option("--memory", o.memory,
                "host | hugepage | gpu | gpu-staged (gpu: each rail's GPU), or a list (host,gpu: every test "
                "once per kind, the GPU/host ratio per pair); default: the inventory's");
}

// How the tests run: retries, retests, parallelism, deadlines, preflight.
void AddRunningFlags(CLI::App* c, SweepOptions& o) {
  c->add_option("--retries", o.retries, "extra attempts for a failed test")->capture_default_str();
  c->add_option("--retest-low", o.retest_low,
                "outlier retest: passes that re-run the tests of low cells (the new result counts)")
      ->capture_default_str()
      ->check(CLI::Range(0, static_cast<int>(limits::kMaxRetestLow)));
  c->add_option("--parallel", o.parallel, "concurrent tests and preflights at most")
      ->capture_default_str()
      ->check(CLI::Range(1, static_cast<int>(limits::kMaxParallel)));
  c->add_option("--sweep-timeout", o.sweep_timeout_s,
                absl::StrCat("deadline of each RunWriteSweep in seconds (0 = estimate x ", limits::kSweepTimeoutFactor,
                             " + ", limits::kSweepTimeoutSlackSeconds, ")"));
  c->add_flag("--no-preflight", o.no_preflight, "skip the preflight fan-out");
  c->add_flag("--force", o.force, "test nodes whose preflight FAILs too");
  c->add_option("--nics", o.nics,
                "NICs of nodes without inventory rails: rails (each GPU's nearest NIC) or all "
                "(every active NIC; storage and in-band NICs with host memory)")
      ->capture_default_str()
      ->check(CLI::IsMember({"rails", "all"}));
  AddExpectationFlags(c, o.expect);
}

// The verdict policy and the baseline.
void AddVerdictFlags(CLI::App* c, SweepOptions& o) {
  c->add_option("--link-gbps", o.link_gbps, "expected link rate for every port (overrides the agents')");
  c->add_option("--min-link-fraction", o.min_link_fraction,
                "absolute verdict: pass at >= this fraction of the link rate (0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--mad-k", o.mad_k, "fleet-relative verdict: low below median - k x MAD (0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, limits::kMaxMadK));
  c->add_option("--fleet-min-drop", o.fleet_min_drop,
                "fleet-relative verdict: low only when also this fraction below the fleet median")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--min-gpu-host-ratio", o.min_gpu_host_ratio,
                "--memory host,gpu: blame a pair's GPU path (gdr) when gpu is below this x host "
                "(0 = off; default: the verdict policy's)")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--max-retransmit-fraction", o.max_retransmit_fraction,
                "flag a test whose port retransmitted more than this fraction of its packets "
                "(link counters such as link_downed flag any growth)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c->add_flag("--ignore-link-counters", o.ignore_link_counters,
              "carry both ports' error counters in the results but flag no test by them");
  c->add_option("--baseline", o.baseline, "run.json of an earlier sweep to compare with");
  c->add_option("--baseline-tolerance", o.baseline_tolerance,
                "low when below the baseline by more than this fraction")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
}

// Where the results go, and the plan of --dry-run.
void AddOutputFlags(CLI::App* c, SweepOptions& o) {
  c->add_option("--out", o.out, "report folder: run.json pairs.csv summary.md report.html junit.xml journal");
  c->add_option("--resume", o.resume, "continue the run recorded in this journal (same inventory and flags)");
  c->add_flag("--dry-run", o.dry_run, "print the plan and its estimated duration; contact no agent");
  c->add_flag("--verbose", o.verbose, "with --dry-run: every round's tests too");
  c->add_option("--estimate-from", o.estimate_from,
                absl::StrCat("run.json of an earlier sweep of this fabric: the estimate uses its measured "
                             "per-test set-up and bandwidth (default: --out DIR/run.json if present, else ",
                             limits::kDefaultSetupSeconds, " s per test at the link rate)"));
  c->add_option("--progress", o.progress,
                "auto (a bar on a terminal, else a line per finished test) | bar | lines | json | none")
      ->capture_default_str();
}

// TLS and timeouts towards the agents.
void AddAgentTlsFlags(CLI::App* c, SweepOptions& o) {
  c->add_option("--tls-ca", o.common.tls.ca_file, "PEM CA that signed the agents' certificates");
  c->add_option("--tls-cert", o.common.tls.cert_file, "PEM client certificate (mTLS)");
  c->add_option("--tls-key", o.common.tls.key_file, "PEM client key (mTLS)");
  c->add_option("--tls-server-name", o.common.tls.server_name,
                "name to check in the agents' certificates instead of the host");
  c->add_flag("--insecure", o.common.tls.insecure, "talk plaintext to agents started with --insecure");
  c->add_option("--timeout-ms", o.common.timeout_ms, "deadline of each unary RPC")
      ->capture_default_str()
      ->check(CLI::Range(limits::kMinRpcTimeoutMs, limits::kMaxRpcTimeoutMs));
  c->add_flag("--json", o.common.json, "with --dry-run: the plan as JSON");
}

// --server: the finished run stored on gdrbench-server.
void AddServerFlags(CLI::App* c, SweepOptions& o) {
  c->add_option("--server", o.server.address, "store the finished run on gdrbench-server (its gRPC HOST:PORT)")
      ->envname("GDRBENCH_SERVER");
  c->add_option("--cluster", o.cluster, "the cluster the run belongs to on the server (default 'default')");
  AddServerConnectionFlags(c, o.server, "with --server: ", /*old_names=*/false);
}

}  // namespace

CLI::App* AddSweepSubcommand(CLI::App& app, SweepOptions& o) {
  CLI::App* c = app.add_subcommand(
      "sweep", "all-pairs bandwidth sweep over every agent: matrix, verdicts, blame, reports");
  AddNodeFlags(c, o);
  AddScheduleFlags(c, o);
  AddTestFlags(c, o);
  AddRunningFlags(c, o);
  AddVerdictFlags(c, o);
  AddOutputFlags(c, o);
  AddAgentTlsFlags(c, o);
  AddServerFlags(c, o);
  return c;
}

}  // namespace gdrbench::controller::cli
