// gdrbench-agent: parses flags into AgentServerConfig and serves until
// SIGINT/SIGTERM. Flags may also come from a config file (--config, INI/TOML
// "key = value" lines, as a systemd unit passes them).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <chrono>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "agent/preflight/preflight_flags.h"
#include "agent/preflight/temp_tree.h"
#include "agent/service/preflight_offline.h"
#include "agent/service/server.h"
#include "common/cli_exit.h"
#include "common/limits.h"
#include "common/logging.h"
#include "common/rpc/grpc_logging.h"
#include "common/rpc/process_defaults.h"
#include "common/version.h"
#include "spdlog/spdlog.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "gdrbench-agent: %s\n", msg.c_str());
  return 1;
}

using gdrbench::agent::service::AgentServer;
using gdrbench::agent::service::AgentServerConfig;

// What the flags set besides AgentServerConfig.
struct AgentFlags {
  AgentServerConfig cfg;
  std::string log_level = "info";
  std::string port_file;
  double handshake_deadline_s = gdrbench::limits::kHandshakeDeadlineMs / 1000.0;
  std::vector<std::string> controller_cidrs;
  gdrbench::agent::service::OfflinePreflightConfig once;
  std::string capture_out;
  CLI::App* preflight_cmd = nullptr;
  CLI::App* capture_cmd = nullptr;
};

// The serving agent's flags.
void AddServeFlags(CLI::App& app, AgentFlags& f) {
  AgentServerConfig& cfg = f.cfg;
  app.add_option("--listen", cfg.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str()
      ->check(gdrbench::ListenAddressCheck());
  app.add_option("--tls-cert", cfg.tls.cert_file, "PEM server certificate");
  app.add_option("--tls-key", cfg.tls.key_file, "PEM server private key");
  app.add_option("--tls-client-ca", cfg.tls.client_ca_file,
                 "PEM CA for client certificates: turns on mTLS");
  app.add_flag("--insecure", cfg.tls.insecure, "serve plaintext (logged as a warning)");
  app.add_option("--devices", cfg.agent.devices,
                 "RDMA devices this agent owns (comma-separated; default: all)")
      ->delimiter(',');
  app.add_option("--fs-root", cfg.agent.fs_root, "read /sys, /proc, /etc under this root")
      ->capture_default_str();
  app.add_option("--health-listen", cfg.health_listen,
                 "HOST:PORT for a plaintext grpc.health.v1-only listener (Kubernetes gRPC probes)")
      ->check(gdrbench::ListenAddressCheck());
  app.add_option("--handshake-deadline-s", f.handshake_deadline_s,
                 "seconds a new connection has to make its first call (TLS handshake included)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 120.0));
  app.add_option("--unauthenticated-per-address", cfg.admission.per_address,
                 "connections without a call yet one address (IPv6: one /64) may hold; past it its oldest is closed")
      ->capture_default_str();
  app.add_option("--unauthenticated-total", cfg.admission.total,
                 "connections without a call yet all addresses may hold; past it the oldest of the address "
                 "holding the most is closed")
      ->capture_default_str();
  app.add_option("--controller-cidr", f.controller_cidrs,
                 "address ranges of controllers (comma-separated CIDRs): their new connections have budgets "
                 "of their own that other addresses cannot use up")
      ->delimiter(',');
  app.add_option("--port-file", f.port_file, "write the bound port here once serving");
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error")->capture_default_str();
}

// One-shot modes (support tickets, tests): run the checks once, or capture
// the files they read into a tarball that `preflight --fs-root` accepts.
void AddOneShotCommands(CLI::App& app, AgentFlags& f) {
  gdrbench::agent::service::OfflinePreflightConfig& once = f.once;
  CLI::App* preflight_cmd = app.add_subcommand(
      "preflight", "run the preflight checks once and exit (1 when a check FAILs)");
  gdrbench::agent::preflight::AddOneShotPreflightFlags(preflight_cmd, once.fs_root, once.json, once.verbose,
                                                       once.run);
  CLI::App* capture_cmd = app.add_subcommand(
      "capture", "pack the files the preflight checks read into FILE.tar.gz and exit");
  capture_cmd->add_option("--out", f.capture_out, "the tarball to write")->required();
  f.preflight_cmd = preflight_cmd;
  f.capture_cmd = capture_cmd;
}

// `preflight` or `capture`: the exit code.
int RunOneShot(AgentFlags& f) {
  // Their temporary trees go on SIGINT/SIGTERM/SIGHUP too.
  gdrbench::agent::preflight::RemoveTempTreesOnSignals("gdrbench-agent");
  if (*f.preflight_cmd) {
    // `gdrbench-agent --devices a,b preflight` as `gdrbench-agent preflight --devices a,b`.
    if (f.once.run.devices.empty()) f.once.run.devices = f.cfg.agent.devices;
    auto out = gdrbench::agent::service::RunPreflightOnce(f.once);
    if (!out.ok()) return Fail(std::string(out.status().message()));
    std::fputs(out->text.c_str(), stdout);
    return out->any_failed ? 1 : 0;
  }
  if (auto st = gdrbench::agent::service::CaptureNode(f.capture_out); !st.ok()) {
    return Fail(std::string(st.message()));
  }
  std::fprintf(stderr, "gdrbench-agent: wrote %s\n", f.capture_out.c_str());
  return 0;
}

// Starts the agent and serves until SIGINT/SIGTERM (SIGHUP reloads TLS);
// the exit code.
int Serve(const AgentFlags& f) {
  // Block the stop signals (and SIGHUP, the TLS reload) in every thread gRPC
  // starts; main waits for them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  // systemd's default soft limit is 1024 files; the unit raises both, and a
  // shell's hard limit is usually far above its soft one.
  gdrbench::agent::service::RaiseFileLimit();
  auto server = AgentServer::Start(f.cfg);
  if (!server.ok()) return Fail(std::string(server.status().message()));
  if (!f.port_file.empty()) {
    // Written then renamed, so a reader never sees a half-written file.
    std::string tmp = f.port_file + ".tmp";
    std::ofstream(tmp) << (*server)->port() << "\n";
    if (std::rename(tmp.c_str(), f.port_file.c_str()) != 0) {
      return Fail("cannot write --port-file " + f.port_file);
    }
  }
  int sig = 0;
  while (sigwait(&stop, &sig) == 0 && sig == SIGHUP) {
    auto reloaded = (*server)->ReloadTls();
    if (reloaded.ok()) {
      spdlog::info("SIGHUP: {}", *reloaded);
    } else {
      spdlog::warn("SIGHUP: kept the TLS certificate in use: {}", std::string(reloaded.status().message()));
    }
  }
  spdlog::info("signal {}: shutting down", sig);
  // Bounded: a call stuck in the kernel (a hung driver file) must not keep
  // the agent up after SIGTERM (systemd would SIGKILL it 90 s later).
  if (!(*server)->Drain(static_cast<int>(gdrbench::limits::kDrainDeadlineMs))) {
    std::fprintf(stderr, "gdrbench-agent: calls still running %.0f s after signal %d (stuck in the kernel?); exiting without them\n",
                 gdrbench::limits::kDrainDeadlineMs / 1000.0, sig);
    std::fflush(nullptr);
    _exit(1);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench-agent: per-node GPUDirect RDMA benchmark agent (gRPC)"};
  app.set_version_flag("--version", std::string(gdrbench::kVersion));
  app.set_config("--config", "", "read flags from a file (key = value per line)");
  AgentFlags flags;
  AddServeFlags(app, flags);
  AddOneShotCommands(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gdrbench::ExitOnParseError(app, e, "gdrbench-agent", argc, argv);
  }
  if (auto st = gdrbench::InitLogging(flags.log_level); !st.ok()) return Fail(std::string(st.message()));
  AgentServerConfig& cfg = flags.cfg;
  cfg.admission.handshake_deadline =
      std::chrono::milliseconds(static_cast<int64_t>(flags.handshake_deadline_s * 1000 + 0.5));
  for (const std::string& text : flags.controller_cidrs) {
    auto cidr = gdrbench::agent::service::Cidr::Parse(text);
    if (!cidr.ok()) return Fail(std::string(cidr.status().message()));
    cfg.admission.controller_cidrs.push_back(*cidr);
  }
  gdrbench::rpc::DisableMutexDeadlockDetection();
  gdrbench::rpc::RouteGrpcLogsToSpdlog();
  if (*flags.preflight_cmd || *flags.capture_cmd) return RunOneShot(flags);
  return Serve(flags);
}
