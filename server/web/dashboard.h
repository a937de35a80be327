// The dashboard on gdrbench-server's HTTP server (api::HttpConfig::routes):
//   GET  /, /ui                   -> /ui/runs
//   GET  /ui/runs, /ui/runs/ID, /ui/sweeps/JOB, /ui/node, /ui/link,
//        /ui/compare, /ui/capacity   pages (read role; 401 and the login form
//                                      without a token)
//   GET  /ui/login, POST /ui/login, POST /ui/logout   the session cookie
//   GET  /ui/assets/PATH           scripts and styles (compiled in; no data,
//                                  no token); vendor/chart.min.js is
//                                  Debian's libjs-chart.js (chart_js)
//   GET  /ui/data/runs/ID/overview, /ui/data/runs/ID/matrix?rail=&size=,
//        /ui/data/node?cluster=&node=, /ui/data/link?cluster=&src=&dst=
//                                  (read role; dashboard.proto, matrix_blob.h)
// Every response carries a Content-Security-Policy that allows only this
// server's own scripts, and no framing.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/api/auth.h"
#include "server/api/handler.h"
#include "server/api/http_gate.h"

namespace httplib {
class Server;
}

namespace gdrbench::server::web {

struct DashboardOptions {
  // Chart.js 3 (UMD build) from Debian's libjs-chart.js: the line charts of
  // the node, link and capacity pages.
  std::string chart_js = "/usr/share/javascript/chart.js/chart.min.js";
};

// The dashboard's routes that take a body (the login form, 8 KiB; logout,
// none needed): api::HttpConfig::route_bodies.
std::vector<api::BodyRoute> DashboardBodyRoutes();

// NOT_FOUND when chart_js does not exist (install libjs-chart.js).
absl::Status MountDashboard(httplib::Server& server, api::Handler& handler, const api::Authorizer& auth, bool tls,
                            const DashboardOptions& options);

}  // namespace gdrbench::server::web
