// gdrbench-server: parses flags into ServerConfig and serves until
// SIGINT/SIGTERM; SIGHUP reloads the TLS certificates (gRPC and HTTP). Flags may also come from a file (--config, "key = value"
// lines, as deploy/systemd/gdrbench-server.service passes them).
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/cli_exit.h"
#include "common/logging.h"
#include "common/rpc/grpc_logging.h"
#include "common/rpc/process_defaults.h"
#include "common/version.h"
#include "server/api/server.h"
#include "server/sweeps/library_executor.h"
#include "server/web/dashboard.h"
#include "spdlog/spdlog.h"

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "gdrbench-server: %s\n", msg.c_str());
  return 1;
}

bool WritePortFile(const std::string& path, int port) {
  if (path.empty()) return true;
  std::string tmp = path + ".tmp";  // renamed: a reader never sees half a file
  std::ofstream(tmp) << port << "\n";
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

using gdrbench::server::api::ControllerServer;
using gdrbench::server::api::ServerConfig;

// What the flags set besides ServerConfig.
struct ServerFlags {
  ServerConfig cfg;
  std::string log_level = "info", grpc_port_file, http_port_file;
  std::string http_cert, http_key;
  std::vector<std::string> clusters;
  std::string state_dir = "/var/lib/gdrbench/sweeps";
  gdrbench::server::web::DashboardOptions dashboard;
  bool no_dashboard = false;
  int drain_seconds = 20;
};

// --db, the listen addresses, TLS, tokens and the HTTP connection limits.
void AddStoreAndListenFlags(CLI::App& app, ServerFlags& f) {
  ServerConfig& cfg = f.cfg;
  app.add_option("--db", cfg.db, "store: a SQLite file (created) or postgresql://USER@HOST/DB?...")
      ->capture_default_str();
  app.add_option("--grpc-listen", cfg.grpc_listen, "HOST:PORT of the gRPC API (port 0: any free one)")
      ->capture_default_str()
      ->check(gdrbench::ListenAddressCheck());
  app.add_option("--http-listen", cfg.http.listen, "HOST:PORT of the HTTP/JSON API and /metrics")
      ->capture_default_str()
      ->check(gdrbench::ListenAddressCheck());
  app.add_option("--tls-cert", cfg.grpc_tls.cert_file, "PEM server certificate (gRPC, and HTTP unless --http-tls-cert)");
  app.add_option("--tls-key", cfg.grpc_tls.key_file, "PEM server key");
  app.add_option("--tls-client-ca", cfg.grpc_tls.client_ca_file,
                 "PEM CA of client certificates: gRPC clients must present one (mTLS)");
  app.add_option("--http-tls-cert", f.http_cert, "PEM certificate for HTTP (default: --tls-cert)");
  app.add_option("--http-tls-key", f.http_key, "PEM key for HTTP (default: --tls-key)");
  app.add_option("--tokens", cfg.tokens_file, "bearer tokens, one 'read|write TOKEN [NAME]' per line");
  app.add_flag("--insecure", cfg.insecure, "plaintext gRPC and HTTP; without --tokens anyone may write");
  app.add_option("--http-max-connections", cfg.http.limits.max_connections,
                 "HTTP connections open at once; one more is closed at once (503)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--http-max-connections-per-address", cfg.http.limits.max_connections_per_address,
                 "HTTP connections open at once from one client address")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
}

// Retention and the regression policy of ingest.
void AddHistoryFlags(CLI::App& app, ServerConfig& cfg) {
  app.add_option("--keep-days", cfg.keep_days, "delete runs older than this many days, baselines kept (0: keep all)")
      ->capture_default_str();
  app.add_option("--regression-tolerance", cfg.handler.ingest.tolerance,
                 "a link regressed when it dropped more than this fraction below the reference run")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--noise-k", cfg.handler.ingest.noise.k,
                 "a link regressed only past this many times its own noise (1.4826 x MAD / median of its "
                 "history), when that is larger than the tolerance")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--min-history", cfg.handler.ingest.noise.min_history,
                 "passing readings a link needs before its history is a reference (fewer: compared with the "
                 "baseline only)")
      ->capture_default_str()
      ->check(CLI::Range(1u, gdrbench::server::history::kMaxNoiseWindow));
  app.add_option("--noise-window", cfg.handler.ingest.noise.window,
                 "recent passing readings kept per link for its history")
      ->capture_default_str()
      ->check(CLI::Range(1u, gdrbench::server::history::kMaxNoiseWindow));
  app.add_option("--persist-runs", cfg.persist_runs,
                 "a regression finding persists (gdrbench_last_run_persistent_regressions) once made in this "
                 "many consecutive runs of its cluster")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--max-regression-links", cfg.handler.ingest.max_regression_links,
                 "link regressions listed per run and reference (the rest are counted)")
      ->capture_default_str();
}

// Sweeps, the dashboard, port files, logging and the shutdown drain.
void AddServingFlags(CLI::App& app, ServerFlags& f) {
  ServerConfig& cfg = f.cfg;
  app.add_option("--cluster", f.clusters,
                 "NAME=INVENTORY.yaml: sweeps of cluster NAME may be requested (repeatable); the "
                 "inventory is read again for each sweep");
  app.add_option("--max-queued-sweeps", cfg.max_queued_sweeps,
                 "sweeps waiting per cluster; one more is refused (HTTP 429, RESOURCE_EXHAUSTED), one equal to a "
                 "queued one is merged with it")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--state-dir", f.state_dir, "journals of the sweeps this server runs")
      ->capture_default_str();
  app.add_option("--web-root", cfg.http.web_root, "also serve the static files of this folder at / (no token)");
  app.add_option("--chart-js", f.dashboard.chart_js,
                 "Chart.js 3 for the dashboard's charts (Debian's libjs-chart.js)")
      ->capture_default_str();
  app.add_flag("--no-dashboard", f.no_dashboard, "serve the API only, no /ui pages");
  app.add_option("--grpc-port-file", f.grpc_port_file, "write the bound gRPC port here once serving");
  app.add_option("--http-port-file", f.http_port_file, "write the bound HTTP port here once serving");
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_option("--upload-idle-seconds", cfg.upload_idle_seconds,
                 "a gRPC upload that sends nothing this long is ended (nothing stored)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--drain-seconds", f.drain_seconds,
                 "SIGTERM: calls in flight (uploads) get this long to finish; keep it below the unit's "
                 "TimeoutStopSec")
      ->capture_default_str()
      ->check(CLI::Range(0, 600));
}

// The sweep executor for --cluster, the dashboard's routes and the HTTP
// certificate's defaults. Returns the exit code of a failure, or 0.
int CompleteConfig(ServerFlags& f) {
  ServerConfig& cfg = f.cfg;
  if (!f.clusters.empty()) {
    std::map<std::string, std::string> inventories;
    for (const auto& c : f.clusters) {
      if (auto st = gdrbench::server::sweeps::ParseClusterFlag(c, &inventories); !st.ok()) {
        Fail(std::string(st.message()));
        return 2;
      }
    }
    auto executor = gdrbench::server::sweeps::LibraryExecutor::Create(std::move(inventories), f.state_dir);
    if (!executor.ok()) {
      Fail(std::string(executor.status().message()));
      return absl::IsInvalidArgument(executor.status()) ? 2 : 1;
    }
    cfg.executor = std::move(*executor);
  }
  if (!f.no_dashboard) {
    cfg.http.routes = [dashboard = f.dashboard](httplib::Server& svr, gdrbench::server::api::Handler& h,
                                                const gdrbench::server::api::Authorizer& auth, bool tls) {
      return gdrbench::server::web::MountDashboard(svr, h, auth, tls, dashboard);
    };
    cfg.http.route_bodies = gdrbench::server::web::DashboardBodyRoutes();
  }
  cfg.http.cert_file = f.http_cert.empty() ? cfg.grpc_tls.cert_file : f.http_cert;
  cfg.http.key_file = f.http_key.empty() ? cfg.grpc_tls.key_file : f.http_key;
  return 0;
}

// SIGHUP: reloads the TLS certificates, one log line per transport.
void ReloadTls(ControllerServer& server) {
  auto reloaded = server.ReloadTls();
  for (const auto& [part, r] : {std::pair{"gRPC", &reloaded.grpc}, std::pair{"HTTP", &reloaded.http}}) {
    if (r->ok()) {
      spdlog::info("SIGHUP: {}: {}", part, **r);
    } else if (absl::IsFailedPrecondition(r->status())) {
      spdlog::info("SIGHUP: {}: {}", part, std::string(r->status().message()));  // plaintext
    } else {
      spdlog::warn("SIGHUP: {}: kept the TLS certificate in use: {}", part,
                   std::string(r->status().message()));
    }
  }
}

// Starts the server and serves until SIGINT/SIGTERM; the exit code.
int Serve(ServerFlags& f) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);  // the TLS reload, in this thread only
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto server = ControllerServer::Start(std::move(f.cfg));
  if (!server.ok()) {
    const int code = absl::IsInvalidArgument(server.status()) ? 2 : 1;
    Fail(std::string(server.status().message()));
    return code;
  }
  if (!WritePortFile(f.grpc_port_file, (*server)->grpc_port()) ||
      !WritePortFile(f.http_port_file, (*server)->http_port())) {
    return Fail("cannot write --grpc-port-file / --http-port-file");
  }
  int sig = 0;
  while (sigwait(&stop, &sig) == 0 && sig == SIGHUP) ReloadTls(**server);
  spdlog::info("signal {}: shutting down", sig);
  (*server)->Shutdown(f.drain_seconds * 1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gdrbench-server: keeps every gdrbench run, compares with baselines, serves an API and metrics"};
  app.set_version_flag("--version", std::string(gdrbench::kVersion));
  app.set_config("--config", "", "read flags from a file (key = value per line)");
  ServerFlags flags;
  AddStoreAndListenFlags(app, flags);
  AddHistoryFlags(app, flags.cfg);
  AddServingFlags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gdrbench::ExitOnParseError(app, e, "gdrbench-server", argc, argv);
  }
  if (auto st = gdrbench::InitLogging(flags.log_level); !st.ok()) return Fail(std::string(st.message()));
  if (auto st = gdrbench::server::history::ValidateNoisePolicy(flags.cfg.handler.ingest.noise); !st.ok()) {
    Fail(std::string(st.message()));
    return 2;
  }
  gdrbench::rpc::DisableMutexDeadlockDetection();
  gdrbench::rpc::RouteGrpcLogsToSpdlog();
  if (int code = CompleteConfig(flags); code != 0) return code;
  return Serve(flags);
}
