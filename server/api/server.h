// gdrbench-server as a whole: the store, the sweep queue, the Controller API
// over gRPC (with grpc.health.v1 and reflection; TLS, mTLS with a client CA)
// and over HTTP/JSON with /metrics, and retention. main.cc only fills
// ServerConfig from flags.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/rpc/server_tls.h"
#include "common/rpc/tls.h"
#include "server/api/auth.h"
#include "server/api/grpc_live_service.h"
#include "server/api/grpc_service.h"
#include "server/api/handler.h"
#include "server/api/http_server.h"
#include "server/metrics/metrics.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_manager.h"

namespace grpc {
class Server;
}

namespace gdrbench::server::api {

struct ServerConfig {
  std::string db = "gdrbench.db";        // SQLite path, or postgresql://...
  std::string grpc_listen = "0.0.0.0:7071";
  rpc::ServerTlsConfig grpc_tls;         // client_ca_file set: mTLS
  HttpConfig http;
  std::string tokens_file;               // required unless insecure
  bool insecure = false;                 // plaintext gRPC and HTTP; tokens optional
  uint32_t keep_days = 0;                // retention; 0 = keep every run
  HandlerOptions handler;
  // Clusters the server can sweep (name -> inventory file), and the executor
  // built from them (null: sweeps on request are off).
  std::unique_ptr<sweeps::SweepExecutor> executor;
  uint32_t max_queued_sweeps = sweeps::kDefaultMaxQueued;  // per cluster
  int upload_idle_seconds = 30;  // a gRPC upload silent this long is ended
  // A regression finding persists (metrics' persistent gauge) once its
  // streak reaches this many consecutive runs of its cluster.
  uint32_t persist_runs = 2;
};

class ControllerServer {
 public:
  // INVALID_ARGUMENT for a bad config; the store's or the listeners' errors.
  static absl::StatusOr<std::unique_ptr<ControllerServer>> Start(ServerConfig config);
  ~ControllerServer();
  int grpc_port() const { return grpc_port_; }
  int http_port() const { return http_->port(); }
  Handler& handler() { return *handler_; }
  // SIGTERM's drain: new calls and connections are refused at once (gRPC
  // and HTTP), a running sweep is cancelled and watchers ended, calls in
  // flight (uploads) finish for up to `grace_ms`; those still running then
  // are cancelled (an unfinished upload stores nothing). Logs one line at
  // the start and one at the end.
  void Shutdown(int grace_ms = 3000);

  // SIGHUP: the certificates read again, gRPC's (--tls-cert/--tls-key/
  // --tls-client-ca, rpc::ReloadableServerTls) and HTTP's (HttpTlsIdentity);
  // each part the line to log, or why it kept the one it serves.
  struct TlsReload {
    absl::StatusOr<std::string> grpc, http;
  };
  TlsReload ReloadTls();

 private:
  ControllerServer() = default;
  void Retention();
  ServerConfig config_;
  std::unique_ptr<rpc::ReloadableServerTls> grpc_tls_;  // outlives grpc_
  std::unique_ptr<store::Store> store_;
  Authorizer auth_;
  metrics::Counters counters_;
  std::unique_ptr<sweeps::SweepManager> sweeps_;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<metrics::Exporter> exporter_;
  std::unique_ptr<GrpcControllerService> service_;
  std::unique_ptr<GrpcLiveRunsService> live_service_;
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<HttpServer> http_;
  int grpc_port_ = 0;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread retention_;
};

}  // namespace gdrbench::server::api
