// gdrbench-sim-fleet (test-only, never installed or packaged): N simulated agents from
// one process (sim_fleet.h) until SIGINT/SIGTERM. Writes the inventory that
// names them once every member serves, for `gdrbench sweep/preflight
// --inventory`.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include "CLI/CLI.hpp"
#include "common/logging.h"
#include "common/rpc/grpc_logging.h"
#include "common/rpc/process_defaults.h"
#include "spdlog/spdlog.h"
#include "tests/integration/fleet/sim_fleet.h"

namespace {

using gdrbench::testing::fleet::FleetConfig;
using gdrbench::testing::fleet::SimFleet;

struct Flags {
  FleetConfig fleet;
  std::string inventory_out;
  std::string log_level = "warn";
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--members", f.fleet.members, "simulated agents to serve")->required();
  app.add_option("--host", f.fleet.host, "address every member listens on (a free port each)")
      ->capture_default_str();
  app.add_option("--fs-root", f.fleet.fs_root, "captured tree every member is (its NICs are the tree's)")
      ->required();
  app.add_option("--tls-cert", f.fleet.tls.cert_file, "PEM server certificate (every member's)");
  app.add_option("--tls-key", f.fleet.tls.key_file, "PEM server private key");
  app.add_option("--tls-client-ca", f.fleet.tls.client_ca_file, "PEM CA for client certificates: mTLS");
  app.add_flag("--insecure", f.fleet.tls.insecure, "serve plaintext");
  app.add_option("--name-prefix", f.fleet.name_prefix, "member names: PREFIX0000, PREFIX0001, ...")
      ->capture_default_str();
  app.add_option("--stop-member", f.fleet.stop_member,
                 "this member dies (port closed, NICs dead) after --stop-after-targets targets");
  app.add_option("--stop-after-targets", f.fleet.stop_after_targets, "see --stop-member");
  app.add_option("--inventory-out", f.inventory_out, "write the inventory here once every member serves")
      ->required();
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error")->capture_default_str();
}

// Written then renamed: a reader never sees half of it.
bool WriteInventory(const std::string& path, const std::string& yaml) {
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << yaml;
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench-sim-fleet: simulated agents for tests and benches (real gRPC/TLS, fake NICs)"};
  Flags f;
  AddFlags(app, f);
  CLI11_PARSE(app, argc, argv);
  if (auto st = gdrbench::InitLogging(f.log_level); !st.ok()) {
    std::fprintf(stderr, "gdrbench-sim-fleet: %s\n", std::string(st.message()).c_str());
    return 2;
  }
  gdrbench::rpc::DisableMutexDeadlockDetection();
  gdrbench::rpc::RouteGrpcLogsToSpdlog();

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // every thread gRPC starts; main waits for them

  auto fleet = SimFleet::Start(f.fleet);
  if (!fleet.ok()) {
    std::fprintf(stderr, "gdrbench-sim-fleet: %s\n", std::string(fleet.status().message()).c_str());
    return 1;
  }
  if (!WriteInventory(f.inventory_out, (*fleet)->InventoryYaml())) {
    std::fprintf(stderr, "gdrbench-sim-fleet: cannot write --inventory-out %s\n", f.inventory_out.c_str());
    return 1;
  }
  std::fprintf(stderr, "gdrbench-sim-fleet: %zu members serving; inventory %s\n", (*fleet)->members().size(),
               f.inventory_out.c_str());
  int sig = 0;
  sigwait(&stop, &sig);
  fleet->reset();
  return 0;
}
