// `gdrbench sweep`: all-pairs (or quick, ring, custom) sweeps over every
// agent of an inventory, the bandwidth matrix, verdicts, blame and reports.
//
// Exit codes: 0 every cell passes; 1 the sweep ran and something failed (or
// an error stopped it); 2 bad usage or input (one line on stderr).
// Progress goes to stderr: a bar with ETA on a terminal, JSON lines
// otherwise. stdout: the plan (--dry-run), else the matrix and the summary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "common/sweep_limits.h"
#include "controller/cli/commands.h"
#include "controller/cli/sweep_flags.h"
#include "controller/inventory/inventory.h"
#include "controller/server_client/server_client.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::cli {

struct SweepOptions {
  CommonOptions common;
  // Where the nodes come from: exactly one.
  std::string inventory;          // YAML file
  std::string agents;             // "h1:port,h2:port" or "node[1-4]:port"
  std::string hostlist;           // Slurm hostlist, with --port
  int port = inventory::kDefaultAgentPort;

  std::string mode{
      sweep_limits::kDefaultMode};  // all-pairs | quick | ring | pairs | incast | cross-rail | cover | shift
  std::string pairs_file;         // mode pairs
  uint32_t quick_rounds = sweep_limits::kDefaultQuickRounds;
  uint64_t schedule_seed = sweep_limits::kDefaultScheduleSeed;
  uint32_t max_concurrent = 0;    // tests per round, 0 = no cap
  uint32_t fan_in = 0;            // mode incast: senders per target
  // Modes cover and shift: the fabric (controller/sweep/fabric_plan.h).
  std::string topology;  // ibnetdiscover / iblinkinfo --line output, or a directory of lldpctl -f json
  std::string topology_format = "auto";
  std::string routing = "ftree";  // ftree | ecmp
  double ecmp_confidence = 0.99;
  int max_fabric_rounds = 64;
  std::string cable_counters;  // a shell command printing v1.SwitchCounters JSON (before and after the tests)

  SweepFlags sweep;               // sizes, iterations, qps, ... (memory: see below); AddSweepFlags sets the sweep's defaults
  std::string memory;             // host | hugepage | gpu | gpu-staged or a list; empty = inventory's

  uint32_t retries = sweep_limits::kDefaultRetries;
  uint32_t retest_low = sweep_limits::kDefaultRetestLow;  // passes re-running the tests of low cells
  uint32_t parallel = sweep_limits::kDefaultParallel;     // concurrent tests (and preflights) at most
  double sweep_timeout_s = 0;     // per RunWriteSweep; 0 = estimate x 4 + 30 s
  bool no_preflight = false;
  bool force = false;             // keep nodes whose preflight FAILs
  std::string nics = "rails";     // rails: GPU rails only; all: every active NIC (others with host memory)
  inventory::Expectations expect; // --expect-* flags, over the inventory's expect:

  double link_gbps = 0;           // override every port's link rate
  // The verdict policy (defaults: common/sweep_limits.h).
  double min_link_fraction = sweep_limits::kDefaultMinFractionOfLink;  // absolute verdict; 0 = off
  double mad_k = sweep_limits::kDefaultMadK;                 // fleet-relative verdict; 0 = off
  double fleet_min_drop = sweep_limits::kDefaultFleetMinDrop;  // ... and at least this far below the median
  std::optional<double> min_gpu_host_ratio;  // gdr blame; unset: the default policy's
  std::string baseline;           // a previous run.json
  double baseline_tolerance = sweep_limits::kDefaultBaselineTolerance;
  // Link counters (analysis/link_flags.h).
  double max_retransmit_fraction = sweep_limits::kDefaultMaxRetransmitFraction;
  bool ignore_link_counters = false;

  std::string out;                // report folder (required unless --dry-run)
  std::string resume;             // journal of an interrupted run
  bool dry_run = false;
  bool verbose = false;           // --dry-run: every round's tests in the text plan
  std::string estimate_from;      // a run.json whose tests' costs the estimate uses
                                  // (default: --out DIR/run.json when there is one)
  std::string progress = "auto";  // auto | bar | json | none

  // --server: the finished run is stored on gdrbench-server (its regressions
  // are then added to the reports); --cluster names the run's cluster.
  ServerClientConfig server;
  std::string cluster;
};

// The fleet expectation flags (--expect-gpus, --expect-rails,
// --expect-link-gbps, --expect-link-state, --expect-driver, --expect-cuda,
// --expect-rdma-core, --expect-ofed, --expect-firmware, --min-mtu) of
// `sweep` and `preflight`; each replaces that key of the inventory's expect:.
void AddExpectationFlags(CLI::App* cmd, inventory::Expectations& expect);

// Registers the `sweep` subcommand and its flags on `app`, filling `options`.
CLI::App* AddSweepSubcommand(CLI::App& app, SweepOptions& options);

// The flags as a v1.SweepSpec (what a request to gdrbench-server carries),
// mapped by sweep::ConfigFromSpec, then what only the CLI has: the nodes
// (files named by flags are read here: inventory, pair list, baseline,
// --estimate-from), TLS, timeouts, journal. INVALID_ARGUMENT naming the flag.
absl::StatusOr<sweep::SweepConfig> ToSweepConfig(const SweepOptions& options);

int SweepCommand(const SweepOptions& options);

}  // namespace gdrbench::controller::cli
