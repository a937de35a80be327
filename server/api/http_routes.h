// The HTTP API's routes (http_routes.cc): runs (a run's JSON upload
// streamed into the ingest), clusters (baselines, trends, capacity), sweeps
// (and their server-sent events, at most `max_event_streams` at once),
// /healthz and /metrics.
#pragma once

#include "server/api/auth.h"
#include "server/api/handler.h"
#include "server/metrics/metrics.h"

namespace gdrbench::server::api {

class GatedServer;

void AddApiRoutes(GatedServer& svr, Handler& h, const Authorizer& auth, metrics::Exporter& exporter,
                  metrics::Counters& counters, int max_event_streams);

}  // namespace gdrbench::server::api
