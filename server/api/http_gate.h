// The HTTP side's admission rules, decided from a request's line and headers
// before a byte of its body is read (issue 31, item 1): which routes take a
// body, how large, and whose; how the body is framed. Everything here is
// pure: http_connection.h applies the decisions to the connection.
//
//   * A route takes a body only when it is in the body-route table, up to
//     its limit. Any other request that announces a body (Content-Length
//     above 0, or Transfer-Encoding) is refused with 413 at once.
//   * A body route that needs a role authenticates here (http_auth.h), so a
//     caller without a token gets its 401 before any body is read.
//   * Content-Length must be one decimal number (RFC 9112 section 6.3): two
//     different values, a sign, a non-digit or more than 18 digits -> 400;
//     both Content-Length and Transfer-Encoding -> 400 (a request smuggling
//     risk behind a proxy); a Transfer-Encoding other than "chunked" -> 501.
//   * Content-Length above the route's limit -> 413 at once, unread.
// Thread safety: BodyRoutes is immutable once built; the functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "server/api/auth.h"

namespace gdrbench::server::api {

// Limits of the HTTP side. The defaults are the documented ones (docs/cli.md).
struct HttpLimits {
  int max_connections = 512;           // open connections, in all
  int max_connections_per_address = 64;  // open connections from one client address
  int max_event_streams = 64;          // sweep event streams open at once
  size_t max_header_bytes = 64 << 10;  // request line and headers together
  int max_headers = 100;               // header fields of one request
  std::chrono::milliseconds header_timeout{10'000};  // TLS handshake, then line and headers: in all
  std::chrono::milliseconds keep_alive_idle{5'000};  // between two requests of a connection
  int keep_alive_max_requests = 100;   // requests on one connection
  std::chrono::milliseconds body_timeout{30'000};    // a body: this, plus ...
  uint64_t body_min_bytes_per_second = 1 << 20;      // ... its size at this rate
  std::chrono::milliseconds write_timeout{30'000};   // without progress, a response write fails
};

// One route that takes a body: METHOD and a path pattern whose "*" matches
// one non-empty path segment ("/api/v1/clusters/*/baseline").
struct BodyRoute {
  std::string method;
  std::string pattern;
  std::optional<Role> role;  // nullopt: no token needed (the dashboard's login form)
  uint64_t max_bytes = 0;
};

// The table of body routes of the API (handler.h's routes) with the upload
// limit `max_run_bytes` for POST /api/v1/runs.
std::vector<BodyRoute> ApiBodyRoutes(uint64_t max_run_bytes);

// True when `path` matches `pattern` (segments equal, "*" one segment).
bool PathMatches(std::string_view pattern, std::string_view path);

// What the gate lets a request do.
struct Admission {
  enum class Framing { kNone, kLength, kChunked };
  Framing framing = Framing::kNone;
  uint64_t length = 0;     // kLength: the Content-Length
  uint64_t max_bytes = 0;  // the route's body limit (kChunked: of the decoded body)
};

// A refusal: the HTTP status and a sentence (ErrorJson's message).
struct Refusal {
  int status = 400;
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
  std::string message;
  bool unauthenticated = false;  // 401: add WWW-Authenticate: Bearer
};

struct GateRequest {
  std::string_view method;
  std::string_view path;
  std::vector<std::string_view> content_length;     // every Content-Length value
  std::vector<std::string_view> transfer_encoding;  // every Transfer-Encoding value
  std::string_view authorization, cookie, request_header;  // as HttpCredentials
};

// The decision for one request; a Refusal when it must not be read further.
// The body is never read for a refused request: the connection is closed
// after the answer.
std::variant<Admission, Refusal> Admit(const GateRequest& request, const std::vector<BodyRoute>& routes,
                                       const Authorizer& auth);

// The longest a body of `bytes` may take to arrive under `limits`.
std::chrono::milliseconds BodyDeadline(const HttpLimits& limits, uint64_t bytes);

}  // namespace gdrbench::server::api
