#include "server/api/http_server.h"

#include <httplib.h>

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/report/capacity_report.h"
#include "server/api/http_auth.h"
#include "server/api/http_connection.h"
#include "server/api/http_json.h"
#include "server/api/run_json_stream.h"
#include "server/history/ingest.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {
namespace {

using Fields = std::multimap<std::string, std::string>;

void SendError(httplib::Response& res, const absl::Status& st) {
  res.status = HttpStatus(st.code());
  res.set_content(ErrorJson(st), "application/json");
}

template <typename T>
void Send(httplib::Response& res, const absl::StatusOr<T>& r) {
  if (!r.ok()) return SendError(res, r.status());
  res.status = 200;
  res.set_content(MessageToJson(*r), "application/json");
}

// Query parameters plus path captures, into a request message.
template <typename T>
absl::StatusOr<T> Request(const httplib::Request& req, const Fields& path = {}) {
  Fields f(req.params.begin(), req.params.end());
  f.insert(path.begin(), path.end());
  T msg;
  if (auto st = FieldsToMessage(f, &msg); !st.ok()) return st;
  return msg;
}

// A chunked body may be read a little past the route's limit (the gate
// bounds it with the chunks' framing): refused here, exactly.
absl::Status BodyWithinLimit(const httplib::Request& req) {
  const uint64_t limit = GatedServer::AdmittedBodyLimit();
  if (limit > 0 && req.body.size() > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the request body of ", req.body.size(), " bytes is over the limit of ", limit, " bytes"));
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<T> Body(const httplib::Request& req, const Fields& path = {}) {
  T msg;
  RETURN_IF_ERROR(BodyWithinLimit(req));
  if (!req.body.empty()) {
    if (auto st = JsonToMessage(req.body, &msg); !st.ok()) return st;
  }
  Fields f(req.params.begin(), req.params.end());
  f.insert(path.begin(), path.end());
  if (!f.empty()) {
    T extra;
    if (auto st = FieldsToMessage(f, &extra); !st.ok()) return st;
    msg.MergeFrom(extra);
  }
  return msg;
}

}  // namespace

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
  ASSIGN_OR_RETURN(*tls, HttpTlsIdentity::Load(cfg.cert_file, cfg.key_file));
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
  auto colon = cfg.listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(cfg.listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--http-listen '", cfg.listen, "' is not HOST:PORT"));
  }
  std::string host = cfg.listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  std::unique_ptr<HttpServer> s(new HttpServer());
  RETURN_IF_ERROR(SetUpTls(cfg, &s->tls_, &s->ssl_ctx_));
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
  auto streams = std::make_shared<std::atomic<int>>(0);
  const int max_streams = cfg.limits.max_event_streams;

  // The token's role for a route: the principal, or the refusal answered.
  auto authorize = [&auth, &counters](const httplib::Request& req, httplib::Response& res,
                                      Role role) -> std::optional<Principal> {
    const std::string authorization = req.get_header_value("Authorization");
    const std::string cookie = req.get_header_value("Cookie");
    const std::string marker = req.get_header_value(kRequestHeader);
    auto who = AuthenticateHttp(auth, {req.method, authorization, cookie, marker}, role);
    if (!who.ok()) {
      ++counters.requests_refused;
      spdlog::warn("HTTP {} {} from {} refused: {}", req.method, req.path, req.remote_addr,
                   std::string(who.status().message()));
      if (absl::IsUnauthenticated(who.status())) res.set_header("WWW-Authenticate", "Bearer");
      SendError(res, who.status());
      return std::nullopt;
    }
    return *who;
  };
  // Guards a route: the token's role, then the handler.
  auto guard = [authorize](Role role, auto fn) {
    return [authorize, role, fn](const httplib::Request& req, httplib::Response& res) {
      if (auto who = authorize(req, res, role)) fn(req, res, *who);
    };
  };
  using Req = const httplib::Request&;
  using Res = httplib::Response&;

  svr.Get("/healthz", [](Req, Res res) { res.set_content("ok\n", "text/plain"); });
  svr.Get("/metrics", guard(Role::kRead, [&exporter](Req, Res res, const Principal&) {
    auto text = exporter.Render();
    if (!text.ok()) return SendError(res, text.status());
    res.set_content(*text, "text/plain; version=0.0.4; charset=utf-8");
  }));

  // A run's JSON streamed into the ingest as it is read (run_json_stream.h):
  // memory bounded by one pair or matrix, not by the body.
  svr.Post("/api/v1/runs", [&h, &counters, authorize](Req req, Res res, const httplib::ContentReader& read) {
    auto who = authorize(req, res, Role::kWrite);
    if (!who) return GatedServer::CloseAfterResponse();
    if (absl::Status st = h.DrainRefusal(); !st.ok()) {
      GatedServer::CloseAfterResponse();
      return SendError(res, st);
    }
    RunJsonStream body;
    absl::Status parsed;
    const bool whole = read([&](const char* data, size_t n) {
      parsed = body.Feed(std::string_view(data, n));
      return parsed.ok();
    });
    if (parsed.ok() && !whole) {
      ++counters.uploads_rejected;
      return;  // the stream cut it short (limit, deadline): the error handler answers from its fault
    }
    if (parsed.ok()) parsed = body.Finish();
    if (!parsed.ok()) {
      ++counters.uploads_rejected;
      if (!whole) GatedServer::CloseAfterResponse();
      return SendError(res, parsed);
    }
    std::unique_ptr<history::Ingester> ingest = h.NewUpload();
    absl::Status fed = body.Replay([&](const v1::RunChunk& c) {
      return c.has_header() ? ingest->Begin(c.header()) : ingest->Add(c);
    });
    absl::StatusOr<v1::UploadRunResponse> r = fed.ok() ? ingest->Finish() : absl::StatusOr<v1::UploadRunResponse>(fed);
    if (!r.ok()) {
      ++counters.uploads_rejected;
    } else if (r->already_stored()) {
      ++counters.uploads_already_stored;
    } else {
      ++counters.uploads_stored;
      res.status = 201;
    }
    spdlog::info("HTTP upload of {} by {} ({} pairs, {} matrices, largest element {} bytes): {}",
                 body.header().run_id(), who->name, body.pairs(), body.matrices(), body.largest_element_bytes(),
                 r.ok() ? (r->already_stored() ? "already stored" : "stored") : std::string(r.status().message()));
    if (!r.ok()) return SendError(res, r.status());
    const int status = res.status == 201 ? 201 : 200;
    Send(res, r);
    res.status = status;
  });
  svr.Get("/api/v1/runs", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListRunsRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.ListRuns(*r));
  }));
  svr.Get(R"(/api/v1/runs/([^/]+))", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetRunRequest>(req, {{"run_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetRun(*r));
  }));
  svr.Get(R"(/api/v1/runs/([^/]+)/cells)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListCellsRequest>(req, {{"run_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.ListCells(*r));
  }));
  svr.Get("/api/v1/compare", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::CompareRunsRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.CompareRuns(*r));
  }));
  svr.Get("/api/v1/clusters", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListClustersRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.ListClusters(*r));
  }));
  svr.Get(R"(/api/v1/clusters/([^/]+)/baseline)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetBaselineRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetBaseline(*r));
  }));
  svr.Put(R"(/api/v1/clusters/([^/]+)/baseline)", guard(Role::kWrite, [&h](Req req, Res res, const Principal& who) {
    auto r = Body<v1::SetBaselineRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.SetBaseline(*r, who));
  }));
  svr.Get(R"(/api/v1/clusters/([^/]+)/trends/link)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::LinkTrendRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetLinkTrend(*r));
  }));
  svr.Get(R"(/api/v1/clusters/([^/]+)/trends/node)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::NodeTrendRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetNodeTrend(*r));
  }));
  svr.Get(R"(/api/v1/clusters/([^/]+)/capacity)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetCapacityReportRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetCapacityReport(*r));
  }));
  // The same report as CSV, for spreadsheets (controller/report/capacity_report.h).
  svr.Get(R"(/api/v1/clusters/([^/]+)/capacity\.csv)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetCapacityReportRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    auto rep = h.GetCapacityReport(*r);
    if (!rep.ok()) return SendError(res, rep.status());
    res.set_header("Content-Disposition", absl::StrCat("attachment; filename=\"capacity-", r->cluster(), "-",
                                                       rep->days(), "d.csv\""));
    res.set_content(controller::report::RenderCapacityCsv(*rep), "text/csv; charset=utf-8");
  }));
  svr.Post("/api/v1/sweeps", guard(Role::kWrite, [&h](Req req, Res res, const Principal& who) {
    auto r = Body<v1::SubmitSweepRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    auto job = h.SubmitSweep(*r, who);
    Send(res, job);
    if (job.ok()) res.status = 202;
  }));
  svr.Get("/api/v1/sweeps", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListSweepsRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.ListSweeps(*r));
  }));
  svr.Get(R"(/api/v1/sweeps/([^/]+))", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetSweepRequest>(req, {{"job_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetSweep(*r));
  }));
  svr.Post(R"(/api/v1/sweeps/([^/]+)/cancel)", guard(Role::kWrite, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::CancelSweepRequest>(req, {{"job_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.CancelSweep(*r));
  }));
  // Server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html):
  // one "data:" line of JSON per SweepJob, the stream ends after the last.
  // Each holds its connection's thread (not a shared worker); at most
  // limits.max_event_streams at once.
  svr.Get(R"(/api/v1/sweeps/([^/]+)/events)", guard(Role::kRead, [&h, streams, max_streams](Req req, Res res, const Principal&) {
    v1::WatchSweepRequest w;
    w.set_job_id(req.matches[1]);
    v1::GetSweepRequest g;
    g.set_job_id(w.job_id());
    if (auto job = h.GetSweep(g); !job.ok()) return SendError(res, job.status());
    if (streams->fetch_add(1) >= max_streams) {
      streams->fetch_sub(1);
      return SendError(res, absl::ResourceExhaustedError(absl::StrCat(
                                "the server has ", max_streams, " sweep event streams open, its limit: try again")));
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [&h, w](size_t, httplib::DataSink& sink) {
      absl::Status st = h.WatchSweep(w, [&](const v1::SweepJob& j) {
        std::string ev = absl::StrCat("event: job\ndata: ", MessageToJson(j), "\n\n");
        return sink.is_writable() && sink.write(ev.data(), ev.size());
      });
      if (!st.ok()) {
        std::string ev = absl::StrCat("event: error\ndata: ", ErrorJson(st), "\n\n");
        sink.write(ev.data(), ev.size());
      }
      sink.done();
      return true;
    }, [streams](bool) { streams->fetch_sub(1); });
  }));
  if (cfg.routes) {
    if (auto st = cfg.routes(svr, h, auth, !cfg.insecure); !st.ok()) return st;
  }
  if (!cfg.web_root.empty()) {
    if (!svr.set_mount_point("/", cfg.web_root)) {
      return absl::NotFoundError(absl::StrCat("--web-root ", cfg.web_root, " is not a folder"));
    }
  }
  svr.set_exception_handler([](Req, Res res, std::exception_ptr) {
    SendError(res, absl::InternalError("the request failed inside the server"));
  });
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
