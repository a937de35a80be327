// The API's routes (handler.h's calls over HTTP/JSON), registered on the
// gated server by HttpServer::Start. Each route is guarded by its role
// (http_auth.h); bodies are read only after the gate admitted them
// (http_gate.h), and a run's JSON is streamed (run_json_stream.h).
#include "server/api/http_routes.h"

#include <httplib.h>

#include <atomic>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "report/capacity_report.h"
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

// A list response: its empty lists print as [] (ListToJson).
template <typename T>
void SendList(httplib::Response& res, const absl::StatusOr<T>& r) {
  if (!r.ok()) return SendError(res, r.status());
  res.status = 200;
  res.set_content(ListToJson(*r), "application/json");
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
  GDR_RETURN_IF_ERROR(BodyWithinLimit(req));
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


using Req = const httplib::Request&;
using Res = httplib::Response&;

// What every group of routes needs: the server, the handler, and the guard
// (the token's role, then the route's function). The objects it refers to
// outlive the server (HttpServer::Start's callers own them).
struct RouteContext {
  GatedServer& svr;
  Handler& h;
  const Authorizer& auth;
  metrics::Exporter& exporter;
  metrics::Counters& counters;
  int max_streams;

  // The token's role for a route: the principal, or the refusal answered.
  auto Authorize() const {
    return [&auth = auth, &counters = counters](const httplib::Request& req, httplib::Response& res,
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
  }
  // Guards a route: the token's role, then the handler.
  auto Guard() const {
    return [authorize = Authorize()](Role role, auto fn) {
      return [authorize, role, fn](const httplib::Request& req, httplib::Response& res) {
        if (auto who = authorize(req, res, role)) fn(req, res, *who);
      };
    };
  }
};

// Feeds the request's body to `body` as it is read, bounded by the gate's
// limit; *whole: the reader read all of it.
absl::Status ReadRunBody(const httplib::ContentReader& read, RunJsonStream& body, bool* whole) {
  absl::Status parsed;
  // The gate bounds a chunked body with its framing: the decoded limit is exact here.
  const uint64_t limit = GatedServer::AdmittedBodyLimit();
  uint64_t got = 0;
  *whole = read([&](const char* data, size_t n) {
    got += n;
    if (limit > 0 && got > limit) {
      parsed = absl::ResourceExhaustedError(
          absl::StrCat("the request body is over the limit of ", limit, " bytes"));
      return false;
    }
    parsed = body.Feed(std::string_view(data, n));
    return parsed.ok();
  });
  return parsed;
}

// The parsed run replayed into a new ingest; its answer.
absl::StatusOr<v1::UploadRunResponse> IngestRun(Handler& h, RunJsonStream& body) {
  std::unique_ptr<history::Ingester> ingest = h.NewUpload();
  absl::Status fed = body.Replay(
      [&](const v1::RunChunk& c) { return c.has_header() ? ingest->Begin(c.header()) : ingest->Add(c); },
      1024, [&](absl::string_view pairs) { return ingest->AddSerializedPairs(pairs); });
  return fed.ok() ? h.FinishUpload(*ingest) : absl::StatusOr<v1::UploadRunResponse>(fed);
}

void AddRunRoutes(const RouteContext& c) {
  GatedServer& svr = c.svr;
  Handler& h = c.h;
  auto guard = c.Guard();
  auto authorize = c.Authorize();
  metrics::Counters& counters = c.counters;
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
    bool whole = false;
    absl::Status parsed = ReadRunBody(read, body, &whole);
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
    absl::StatusOr<v1::UploadRunResponse> r = IngestRun(h, body);
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
    SendList(res, h.ListRuns(*r));
  }));
  svr.Get(R"(/api/v1/runs/([^/]+))", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetRunRequest>(req, {{"run_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    Send(res, h.GetRun(*r));
  }));
  svr.Get(R"(/api/v1/runs/([^/]+)/cells)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListCellsRequest>(req, {{"run_id", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    SendList(res, h.ListCells(*r));
  }));
  svr.Get("/api/v1/compare", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::CompareRunsRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    SendList(res, h.CompareRuns(*r));
  }));
}

// Live runs (history/live_runs.h): a sweep's cells while it runs. The
// controller writes over gRPC; HTTP lists, reads and abandons them.
void AddLiveRunRoutes(const RouteContext& c) {
  GatedServer& svr = c.svr;
  Handler& h = c.h;
  auto guard = c.Guard();
  svr.Get("/api/v1/live-runs", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
            auto r = Request<v1::ListLiveRunsRequest>(req);
            if (!r.ok()) return SendError(res, r.status());
            SendList(res, h.ListLiveRuns(*r));
          }));
  svr.Get(R"(/api/v1/live-runs/([^/]+))", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
            auto r = Request<v1::GetLiveRunRequest>(req, {{"run_id", req.matches[1]}});
            if (!r.ok()) return SendError(res, r.status());
            Send(res, h.GetLiveRun(*r));
          }));
  svr.Get(R"(/api/v1/live-runs/([^/]+)/cells)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
            auto r = Request<v1::ListLiveCellsRequest>(req, {{"run_id", req.matches[1]}});
            if (!r.ok()) return SendError(res, r.status());
            SendList(res, h.ListLiveCells(*r));
          }));
  svr.Delete(R"(/api/v1/live-runs/([^/]+))", guard(Role::kWrite, [&h](Req req, Res res, const Principal&) {
               auto r = Request<v1::AbandonLiveRunRequest>(req, {{"run_id", req.matches[1]}});
               if (!r.ok()) return SendError(res, r.status());
               Send(res, h.AbandonLiveRun(*r));
             }));
}

void AddClusterRoutes(const RouteContext& c) {
  GatedServer& svr = c.svr;
  Handler& h = c.h;
  auto guard = c.Guard();
  svr.Get("/api/v1/clusters", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::ListClustersRequest>(req);
    if (!r.ok()) return SendError(res, r.status());
    SendList(res, h.ListClusters(*r));
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
  // The same report as CSV, for spreadsheets (report/capacity_report.h).
  svr.Get(R"(/api/v1/clusters/([^/]+)/capacity\.csv)", guard(Role::kRead, [&h](Req req, Res res, const Principal&) {
    auto r = Request<v1::GetCapacityReportRequest>(req, {{"cluster", req.matches[1]}});
    if (!r.ok()) return SendError(res, r.status());
    auto rep = h.GetCapacityReport(*r);
    if (!rep.ok()) return SendError(res, rep.status());
    res.set_header("Content-Disposition", absl::StrCat("attachment; filename=\"capacity-", r->cluster(), "-",
                                                       rep->days(), "d.csv\""));
    res.set_content(report::RenderCapacityCsv(*rep), "text/csv; charset=utf-8");
  }));
}

void AddSweepRoutes(const RouteContext& c) {
  GatedServer& svr = c.svr;
  Handler& h = c.h;
  auto guard = c.Guard();
  auto streams = std::make_shared<std::atomic<int>>(0);
  const int max_streams = c.max_streams;
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
    SendList(res, h.ListSweeps(*r));
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
      // While the job does not change, a comment line (ignored by clients, as
      // the spec says of lines starting with ':') every second: a client that
      // left fails the write and frees its stream's slot.
      static constexpr char kKeepAlive[] = ": keep-alive\n\n";
      absl::Status st = h.WatchSweep(
          w,
          [&](const v1::SweepJob& j) {
            std::string ev = absl::StrCat("event: job\ndata: ", MessageToJson(j), "\n\n");
            return sink.is_writable() && sink.write(ev.data(), ev.size());
          },
          [&] { return sink.is_writable() && sink.write(kKeepAlive, sizeof(kKeepAlive) - 1); });
      if (!st.ok()) {
        std::string ev = absl::StrCat("event: error\ndata: ", ErrorJson(st), "\n\n");
        sink.write(ev.data(), ev.size());
      }
      sink.done();
      return true;
    }, [streams](bool) { streams->fetch_sub(1); });
  }));
}

}  // namespace

void AddApiRoutes(GatedServer& svr, Handler& h, const Authorizer& auth, metrics::Exporter& exporter,
                  metrics::Counters& counters, int max_event_streams) {
  const RouteContext c{svr, h, auth, exporter, counters, max_event_streams};
  auto guard = c.Guard();
  svr.Get("/healthz", [](Req, Res res) { res.set_content("ok\n", "text/plain"); });
  svr.Get("/metrics", guard(Role::kRead, [&exporter = c.exporter](Req, Res res, const Principal&) {
    auto text = exporter.Render();
    if (!text.ok()) return SendError(res, text.status());
    res.set_content(*text, "text/plain; version=0.0.4; charset=utf-8");
  }));

  AddRunRoutes(c);
  AddLiveRunRoutes(c);
  AddClusterRoutes(c);
  AddSweepRoutes(c);
  svr.set_exception_handler([](Req, Res res, std::exception_ptr) {
    SendError(res, absl::InternalError("the request failed inside the server"));
  });
}

}  // namespace gdrbench::server::api
