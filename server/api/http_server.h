// The HTTP side: the Controller's resources as JSON under /api/v1/ (routes
// in controller.proto), GET /metrics (Prometheus text), GET /healthz, the
// sweep progress stream as server-sent events, and static files from a web
// root (the dashboard) — on cpp-httplib (Debian's libcpp-httplib-dev), TLS
// unless --insecure. Every /api/v1 and /metrics request needs a bearer
// token of the route's role (the Authorization header, or the dashboard's
// session cookie: http_auth.h); /healthz and the static files need none.
// More routes (the dashboard, server/web) come from HttpConfig::routes.
// Thread safety: the server runs its own thread pool; Stop from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "server/api/auth.h"
#include "server/api/handler.h"
#include "server/api/http_tls.h"
#include "server/metrics/metrics.h"

namespace httplib {
class Server;
}

namespace gdrbench::server::api {

struct HttpConfig {
  std::string listen = "0.0.0.0:7080";  // HOST:PORT; port 0 picks one
  std::string cert_file, key_file;      // TLS (required unless insecure)
  bool insecure = false;
  std::string web_root;                 // static files served at /, if set
  size_t max_json_upload = 256u << 20;  // POST /api/v1/runs body limit
  int threads = 32;                     // long-lived event streams hold one each
  // Registers more routes (server/web's dashboard) before the server listens.
  std::function<absl::Status(httplib::Server&, Handler&, const Authorizer&, bool tls)> routes;
};

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpConfig& config, Handler& handler,
                                                           const Authorizer& auth,
                                                           metrics::Exporter& exporter,
                                                           metrics::Counters& counters);
  ~HttpServer();
  int port() const { return port_; }
  void Stop();
  // SIGHUP: --http-tls-cert/--http-tls-key read again (HttpTlsIdentity::
  // Reload); FAILED_PRECONDITION when serving plaintext.
  absl::StatusOr<std::string> ReloadTls();

 private:
  HttpServer() = default;
  std::unique_ptr<HttpTlsIdentity> tls_;  // outlives server_'s SSL_CTX (declared first)
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gdrbench::server::api
