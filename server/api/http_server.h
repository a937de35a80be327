// The HTTP side: the Controller's resources as JSON under /api/v1/ (routes
// in controller.proto), GET /metrics (Prometheus text), GET /healthz, the
// sweep progress stream as server-sent events, and static files from a web
// root (the dashboard) — on cpp-httplib (Debian's libcpp-httplib-dev), TLS
// unless --insecure. Every /api/v1 and /metrics request needs a bearer
// token of the route's role (the Authorization header, or the dashboard's
// session cookie: http_auth.h); /healthz and the static files need none.
// More routes (the dashboard, server/web) come from HttpConfig::routes.
// Before any body is read, the gate (http_gate.h) checks the route, the
// framing and, for a write, the token; connections are capped and every
// request has deadlines (http_connection.h).
// Thread safety: a thread per connection; Stop from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "server/api/auth.h"
#include "server/api/handler.h"
#include "server/api/http_gate.h"
#include "server/api/http_tls.h"
#include "server/metrics/metrics.h"

namespace httplib {
class Server;
}
typedef struct ssl_ctx_st SSL_CTX;

namespace gdrbench::server::api {

class GatedServer;

struct HttpConfig {
  std::string listen = "0.0.0.0:7080";  // HOST:PORT; port 0 picks one
  std::string cert_file, key_file;      // TLS (required unless insecure)
  bool insecure = false;
  std::string web_root;                 // static files served at /, if set
  size_t max_json_upload = 256u << 20;  // POST /api/v1/runs body limit
  HttpLimits limits;                    // connections, headers, deadlines (http_gate.h)
  // Registers more routes (server/web's dashboard) before the server listens.
  std::function<absl::Status(httplib::Server&, Handler&, const Authorizer&, bool tls)> routes;
  // The bodies those routes take (every other route takes none: http_gate.h).
  std::vector<BodyRoute> route_bodies;
};

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpConfig& config, Handler& handler,
                                                           const Authorizer& auth,
                                                           metrics::Exporter& exporter,
                                                           metrics::Counters& counters);
  ~HttpServer();
  int port() const { return port_; }
  // Stops accepting; connections waiting for a request end at once,
  // requests in flight get until `deadline` (http_connection.h).
  void Stop(std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now());
  // SIGHUP: --http-tls-cert/--http-tls-key read again (HttpTlsIdentity::
  // Reload); FAILED_PRECONDITION when serving plaintext.
  absl::StatusOr<std::string> ReloadTls();

 private:
  HttpServer() = default;
  std::unique_ptr<HttpTlsIdentity> tls_;  // outlives server_'s SSL_CTX (declared first)
  std::unique_ptr<GatedServer> server_;
  SSL_CTX* ssl_ctx_ = nullptr;  // freed after server_ stopped
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gdrbench::server::api
