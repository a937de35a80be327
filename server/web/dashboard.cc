#include "server/web/dashboard.h"

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/embedded_file.h"
#include "report/heatmap_html.h"
#include "server/api/http_auth.h"
#include "server/api/http_json.h"
#include "server/web/pages.h"
#include "server/web/web_data.h"
#include "spdlog/spdlog.h"

namespace gdrbench::embedded {
// server/web/assets (gdrbench_embed in server/web/CMakeLists.txt).
const std::vector<EmbeddedFile>& DashboardAssets();
}  // namespace gdrbench::embedded

namespace gdrbench::server::web {
namespace {

using Req = const httplib::Request&;
using Res = httplib::Response&;

constexpr char kCsp[] =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

void Secure(Res res) {
  res.set_header("Content-Security-Policy", kCsp);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "same-origin");
}

void SendError(Res res, const absl::Status& st) {
  res.status = api::HttpStatus(st.code());
  res.set_content(api::ErrorJson(st), "application/json");
}

std::string ContentType(const std::string& path) {
  if (absl::EndsWith(path, ".js")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(path, ".css")) return "text/css; charset=utf-8";
  if (absl::EndsWith(path, ".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The Chart.js file, read once.
class VendorFile {
 public:
  explicit VendorFile(std::string path) : path_(std::move(path)) {}
  absl::StatusOr<std::string> Get() {
    std::lock_guard<std::mutex> l(mu_);
    if (!text_.empty()) return text_;
    std::ifstream in(path_, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat(path_, " cannot be read: install libjs-chart.js"));
    std::stringstream ss;
    ss << in.rdbuf();
    text_ = ss.str();
    return text_;
  }

 private:
  std::string path_;
  std::mutex mu_;
  std::string text_;
};

absl::StatusOr<api::Principal> Caller(const api::Authorizer& auth, Req req, api::Role role) {
  const std::string authorization = req.get_header_value("Authorization");
  const std::string cookie = req.get_header_value("Cookie");
  const std::string marker = req.get_header_value(api::kRequestHeader);
  return api::AuthenticateHttp(auth, {req.method, authorization, cookie, marker}, role);
}

std::string PathWithQuery(Req req) {
  std::string q = httplib::detail::params_to_query_str(req.params);
  return q.empty() ? req.path : absl::StrCat(req.path, "?", q);
}

// Guards a page: without a valid token, 401 and the login form.
template <typename Fn>
auto PageRoute(const api::Authorizer& auth, Fn fn) {
  return [&auth, fn](Req req, Res res) {
    Secure(res);
    res.set_header("Cache-Control", "no-store");
    auto who = Caller(auth, req, api::Role::kRead);
    if (!who.ok()) {
      spdlog::info("HTTP {} {} from {}: login needed ({})", req.method, req.path, req.remote_addr,
                   std::string(who.status().message()));
      res.status = 401;
      res.set_content(RenderLogin(PathWithQuery(req), ""), "text/html; charset=utf-8");
      return;
    }
    fn(req, res, *who);
  };
}

// Guards a data route: the API's JSON errors.
template <typename Fn>
auto DataRoute(const api::Authorizer& auth, Fn fn) {
  return [&auth, fn](Req req, Res res) {
    Secure(res);
    auto who = Caller(auth, req, api::Role::kRead);
    if (!who.ok()) {
      if (absl::IsUnauthenticated(who.status())) res.set_header("WWW-Authenticate", "Bearer");
      return SendError(res, who.status());
    }
    fn(req, res);
  };
}

absl::StatusOr<store::RunRow> FindRun(api::Handler& h, const std::string& id) {
  if (auto st = api::CheckRunId(id, "run_id"); !st.ok()) return st;
  auto row = h.store().FindRun(id);
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("run ", id, " is not stored"));
  return **row;
}

absl::Status ParseUint(Req req, const char* name, uint64_t max, uint64_t* out, bool* given = nullptr) {
  if (given) *given = false;
  if (!req.has_param(name)) return absl::OkStatus();
  const std::string v = req.get_param_value(name);
  if (!absl::SimpleAtoi(v, out) || *out > max) {
    return absl::InvalidArgumentError(absl::StrCat(name, " '", v.substr(0, 20), "' is not a number up to ", max));
  }
  if (given) *given = true;
  return absl::OkStatus();
}

void MountPages(httplib::Server& svr, const api::Authorizer& auth) {
  svr.Get("/", [](Req, Res res) { res.set_redirect("/ui/runs"); });
  svr.Get("/ui/?", [](Req, Res res) { res.set_redirect("/ui/runs"); });
  svr.Get(R"(/ui/(runs|runs/[^/]+|sweeps/[^/]+|live/[^/]+|node|link|compare|capacity))",
          PageRoute(auth, [&auth](Req req, Res res, const api::Principal& who) {
            const Page* page = FindPage(req.matches[1]);
            res.set_content(RenderPage(*page, who, auth.open()), "text/html; charset=utf-8");
          }));
}

void MountSession(httplib::Server& svr, const api::Authorizer& auth, bool tls) {
  svr.Get("/ui/login", [](Req req, Res res) {
    Secure(res);
    res.set_content(RenderLogin(req.get_param_value("next"), ""), "text/html; charset=utf-8");
  });
  svr.Post("/ui/login", [&auth, tls](Req req, Res res) {
    Secure(res);
    httplib::Params form = req.params;
    if (!form.count("token") && !req.body.empty()) httplib::detail::parse_query_text(req.body, form);
    auto get = [&](const char* k) { auto it = form.find(k); return it == form.end() ? std::string() : it->second; };
    const std::string token = get("token"), next = get("next");
    auto who = auth.Check(absl::StrCat("Bearer ", token), api::Role::kRead);
    if (token.empty() || !who.ok()) {
      spdlog::warn("HTTP login from {} refused", req.remote_addr);
      res.status = 401;
      res.set_content(RenderLogin(next, "That token is not known to this server."), "text/html; charset=utf-8");
      return;
    }
    absl::StatusOr<std::string> session = auth.sessions().Open(*who);
    if (!session.ok()) return SendError(res, session.status());
    spdlog::info("HTTP login of {} from {}", who->name, req.remote_addr);
    res.set_header("Set-Cookie", api::SessionCookie(*session, tls));
    res.set_redirect(SafeNext(next), 303);
  });
  svr.Post("/ui/logout", [&auth, tls](Req req, Res res) {
    Secure(res);
    auth.sessions().Revoke(api::CookieValue(req.get_header_value("Cookie"), api::kSessionCookie));
    res.set_header("Set-Cookie", api::ClearedSessionCookie(tls));
    res.set_redirect("/ui/login", 303);
  });
}

void MountAssets(httplib::Server& svr, std::shared_ptr<VendorFile> chart) {
  svr.Get(R"(/ui/assets/(.+))", [chart](Req req, Res res) {
    Secure(res);
    const std::string path = req.matches[1];
    res.set_header("Cache-Control", "public, max-age=86400");  // URLs carry ?v=VERSION
    if (path == "vendor/chart.min.js") {
      auto text = chart->Get();
      if (!text.ok()) return SendError(res, text.status());
      return res.set_content(*text, "text/javascript; charset=utf-8");
    }
    const EmbeddedFile* f = FindEmbedded(embedded::DashboardAssets(), path);
    if (f == nullptr) f = FindEmbedded(embedded::HeatmapScripts(), path);
    if (f == nullptr) return SendError(res, absl::NotFoundError(absl::StrCat("no asset ", path)));
    res.set_content(std::string(f->data), ContentType(path).c_str());
  });
}

void MountData(httplib::Server& svr, api::Handler& h, const api::Authorizer& auth) {
  svr.Get(R"(/ui/data/runs/([^/]+)/overview)", DataRoute(auth, [&h](Req req, Res res) {
    auto row = FindRun(h, req.matches[1]);
    if (!row.ok()) return SendError(res, row.status());
    auto o = RunOverview(h.store(), *row);
    if (!o.ok()) return SendError(res, o.status());
    res.set_content(api::MessageToJson(*o), "application/json");
  }));
  svr.Get(R"(/ui/data/runs/([^/]+)/matrix)", DataRoute(auth, [&h](Req req, Res res) {
    auto row = FindRun(h, req.matches[1]);
    if (!row.ok()) return SendError(res, row.status());
    uint64_t rail = 0, size = 0;
    bool has_rail = false;
    if (auto st = ParseUint(req, "rail", 4095, &rail, &has_rail); !st.ok()) return SendError(res, st);
    if (auto st = ParseUint(req, "size", uint64_t{1} << 40, &size); !st.ok()) return SendError(res, st);
    auto blob = MatrixBlob(h.store(), *row, has_rail ? std::optional<uint32_t>(rail) : std::nullopt, size);
    if (!blob.ok()) return SendError(res, blob.status());
    res.set_header("Cache-Control", "private, max-age=3600");  // a stored run never changes
    res.set_content(*blob, "application/octet-stream");
  }));
  auto history = [&h](Req req, Res res, bool link) {
    HistoryQuery q;
    q.cluster = req.get_param_value("cluster");
    if (link) {
      q.src = req.get_param_value("src");
      q.dst = req.get_param_value("dst");
    } else {
      q.node = req.get_param_value("node");
    }
    uint64_t v = 0;
    bool given = false;
    if (auto st = ParseUint(req, "rail", 4095, &v, &given); !st.ok()) return SendError(res, st);
    if (given) q.rail = static_cast<uint32_t>(v);
    if (auto st = ParseUint(req, "last", 200, &v, &given); !st.ok()) return SendError(res, st);
    if (given) q.last = static_cast<uint32_t>(v);
    auto out = History(h.store(), q);
    if (!out.ok()) return SendError(res, out.status());
    res.set_content(api::MessageToJson(*out), "application/json");
  };
  svr.Get("/ui/data/node", DataRoute(auth, [history](Req req, Res res) { history(req, res, false); }));
  svr.Get("/ui/data/link", DataRoute(auth, [history](Req req, Res res) { history(req, res, true); }));
}

}  // namespace

std::vector<api::BodyRoute> DashboardBodyRoutes() {
  return {{"POST", "/ui/login", std::nullopt, 8 << 10}, {"POST", "/ui/logout", std::nullopt, 8 << 10}};
}

absl::Status MountDashboard(httplib::Server& svr, api::Handler& h, const api::Authorizer& auth, bool tls,
                            const DashboardOptions& o) {
  if (!std::filesystem::exists(o.chart_js)) {
    return absl::NotFoundError(absl::StrCat("--chart-js ", o.chart_js,
                                            " does not exist: install Debian's libjs-chart.js (deploy/install-deps)"));
  }
  MountPages(svr, auth);
  MountSession(svr, auth, tls);
  MountAssets(svr, std::make_shared<VendorFile>(o.chart_js));
  MountData(svr, h, auth);
  return absl::OkStatus();
}

}  // namespace gdrbench::server::web
