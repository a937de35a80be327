#include "server/api/http_gate.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/api/http_auth.h"
#include "server/api/http_json.h"

namespace gdrbench::server::api {
namespace {

absl::string_view A(std::string_view v) { return absl::string_view(v.data(), v.size()); }

constexpr uint64_t kSmallBody = 1 << 20;  // a request message of JSON: a sweep, a baseline

// A Content-Length value: 1 to 18 decimal digits (below 10^18, far above
// any limit; RFC 9112 section 8.6 allows no sign, space or other character).
std::optional<uint64_t> ParseLength(std::string_view v) {
  if (v.empty() || v.size() > 18) return std::nullopt;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

Refusal Refuse(int status, std::string message) {
  const absl::StatusCode code = status == 413   ? absl::StatusCode::kResourceExhausted
                                : status == 501 ? absl::StatusCode::kUnimplemented
                                                : absl::StatusCode::kInvalidArgument;
  return Refusal{status, code, std::move(message), false};
}

// The body framing of a request; a Refusal when it is malformed.
std::variant<Admission, Refusal> Framing(const GateRequest& r) {
  Admission a;
  if (!r.transfer_encoding.empty()) {
    if (!r.content_length.empty()) {
      return Refuse(400, "a request with both Content-Length and Transfer-Encoding is refused (RFC 9112 section 6.3)");
    }
    if (r.transfer_encoding.size() != 1 || !absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(A(r.transfer_encoding[0])), "chunked")) {
      return Refuse(501, "only Transfer-Encoding: chunked is understood");
    }
    a.framing = Admission::Framing::kChunked;
    return a;
  }
  if (r.content_length.empty()) return a;
  std::optional<uint64_t> first;
  for (std::string_view v : r.content_length) {
    // One field may carry a list ("5, 5"), which RFC 9112 lets a server
    // accept when every member is the same.
    for (absl::string_view part : absl::StrSplit(A(v), ',')) {
      absl::string_view digits = absl::StripAsciiWhitespace(part);
      std::optional<uint64_t> n = ParseLength(std::string_view(digits.data(), digits.size()));
      if (!n) {
        return Refuse(400, absl::StrCat("Content-Length '", std::string(v.substr(0, 40)),
                                        "' is not a decimal number of at most 18 digits"));
      }
      if (first && *first != *n) return Refuse(400, "the request has two different Content-Length values");
      first = n;
    }
  }
  if (*first > 0) {
    a.framing = Admission::Framing::kLength;
    a.length = *first;
  }
  return a;
}

std::string Route(const GateRequest& r) { return absl::StrCat(A(r.method), " ", A(r.path.substr(0, 200))); }

}  // namespace

std::vector<BodyRoute> ApiBodyRoutes(uint64_t max_run_bytes) {
  return {
      {"POST", "/api/v1/runs", Role::kWrite, max_run_bytes},
      {"PUT", "/api/v1/clusters/*/baseline", Role::kWrite, kSmallBody},
      {"POST", "/api/v1/sweeps", Role::kWrite, kSmallBody},
      {"POST", "/api/v1/sweeps/*/cancel", Role::kWrite, kSmallBody},
  };
}

bool PathMatches(std::string_view pattern, std::string_view path) {
  std::vector<absl::string_view> p = absl::StrSplit(A(pattern), '/');
  std::vector<absl::string_view> s = absl::StrSplit(A(path), '/');
  if (p.size() != s.size()) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == "*") {
      if (s[i].empty()) return false;
    } else if (p[i] != s[i]) {
      return false;
    }
  }
  return true;
}

std::variant<Admission, Refusal> Admit(const GateRequest& r, const std::vector<BodyRoute>& routes,
                                       const Authorizer& auth) {
  std::variant<Admission, Refusal> framing = Framing(r);
  if (std::holds_alternative<Refusal>(framing)) return framing;
  Admission a = std::get<Admission>(framing);
  if (a.framing == Admission::Framing::kNone) return a;  // nothing to read: the route decides as usual
  auto route = std::find_if(routes.begin(), routes.end(), [&](const BodyRoute& b) {
    return b.method == r.method && PathMatches(b.pattern, r.path);
  });
  if (route == routes.end()) return Refuse(413, absl::StrCat(Route(r), " takes no request body"));
  if (route->role) {
    absl::StatusOr<Principal> who =
        AuthenticateHttp(auth, {r.method, r.authorization, r.cookie, r.request_header}, *route->role);
    if (!who.ok()) {
      return Refusal{HttpStatus(who.status().code()), who.status().code(), std::string(who.status().message()),
                     absl::IsUnauthenticated(who.status())};
    }
  }
  a.max_bytes = route->max_bytes;
  if (a.framing == Admission::Framing::kLength && a.length > route->max_bytes) {
    return Refuse(413, absl::StrCat(Route(r), ": a body of ", a.length, " bytes is over the limit of ",
                                    route->max_bytes, " bytes"));
  }
  return a;
}

std::chrono::milliseconds BodyDeadline(const HttpLimits& limits, uint64_t bytes) {
  const uint64_t rate = std::max<uint64_t>(limits.body_min_bytes_per_second, 1);
  return limits.body_timeout + std::chrono::milliseconds(bytes / rate * 1000 + (bytes % rate) * 1000 / rate);
}

}  // namespace gdrbench::server::api
