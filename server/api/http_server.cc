#include "server/api/http_server.h"

#include <httplib.h>

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/listen_address.h"
#include "common/status.h"
#include "server/api/http_connection.h"
#include "server/api/http_routes.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

HttpServer::~HttpServer() {
  Stop();
  if (ssl_ctx_) SSL_CTX_free(ssl_ctx_);
}

void HttpServer::Stop(std::chrono::steady_clock::time_point deadline) {
  if (server_) server_->Shutdown(deadline);
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::string> HttpServer::ReloadTls() {
  if (!tls_) return absl::FailedPreconditionError("serving plaintext (--insecure): no TLS material to reload");
  return tls_->Reload();
}

namespace {

// The server's SSL_CTX from the two files (read once, by HttpTlsIdentity:
// its errors name the flag and the file), or none with --insecure.
absl::Status SetUpTls(const HttpConfig& cfg, std::unique_ptr<HttpTlsIdentity>* tls, SSL_CTX** ctx) {
  if (cfg.insecure) {
    if (!cfg.cert_file.empty() || !cfg.key_file.empty()) {
      return absl::InvalidArgumentError("--insecure serves plaintext: drop --http-tls-cert/--http-tls-key");
    }
    return absl::OkStatus();
  }
  if (cfg.cert_file.empty() || cfg.key_file.empty()) {
    return absl::InvalidArgumentError("HTTP needs --http-tls-cert and --http-tls-key (or --insecure for plaintext)");
  }
  GDR_ASSIGN_OR_RETURN(*tls, HttpTlsIdentity::Load(cfg.cert_file, cfg.key_file));
  *ctx = SSL_CTX_new(TLS_server_method());
  if (*ctx == nullptr) return absl::InternalError("SSL_CTX_new failed for the HTTP server");
  SSL_CTX_set_mode(*ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return (*tls)->Install(*ctx);  // handshakes from here on: what SIGHUP reloads
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpConfig& cfg, Handler& h,
                                                              const Authorizer& auth,
                                                              metrics::Exporter& exporter,
                                                              metrics::Counters& counters) {
  GDR_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress("--http-listen", cfg.listen));
  const std::string& host = listen.host;
  const int port = listen.port;
  std::unique_ptr<HttpServer> s(new HttpServer());
  GDR_RETURN_IF_ERROR(SetUpTls(cfg, &s->tls_, &s->ssl_ctx_));
  GatedServer::Options gate;
  gate.limits = cfg.limits;
  gate.body_routes = ApiBodyRoutes(cfg.max_json_upload);
  gate.body_routes.insert(gate.body_routes.end(), cfg.route_bodies.begin(), cfg.route_bodies.end());
  gate.auth = &auth;
  gate.tls = s->ssl_ctx_;
  gate.counters = &counters;
  uint64_t largest = 0;
  for (const BodyRoute& r : gate.body_routes) largest = std::max(largest, r.max_bytes);
  s->server_ = std::make_unique<GatedServer>(std::move(gate));
  GatedServer& svr = *s->server_;
  svr.set_payload_max_length(largest);  // the gate refused a larger Content-Length already
  AddApiRoutes(svr, h, auth, exporter, counters, cfg.limits.max_event_streams);
  if (cfg.routes) {
    if (auto st = cfg.routes(svr, h, auth, !cfg.insecure); !st.ok()) return st;
  }
  if (!cfg.web_root.empty()) {
    if (!svr.set_mount_point("/", cfg.web_root)) {
      return absl::NotFoundError(absl::StrCat("--web-root ", cfg.web_root, " is not a folder"));
    }
  }
  int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", cfg.listen, " (HTTP)"));
  s->port_ = bound;
  svr.RaiseBacklog(SOMAXCONN);
  if (cfg.insecure) spdlog::warn("HTTP on {}:{} is plaintext (--insecure)", host, bound);
  httplib::Server* raw = s->server_.get();
  s->thread_ = std::thread([raw] { raw->listen_after_bind(); });
  spdlog::info("HTTP API on {}:{}{}", host, bound, cfg.insecure ? "" : " (TLS)");
  return s;
}

}  // namespace gdrbench::server::api
