// Who is calling over HTTP: the bearer token of the Authorization header
// (API clients: curl, scripts), else the dashboard's session (sessions.h)
// whose id is in the session cookie (browsers: set by POST /ui/login,
// HttpOnly, SameSite=Strict, Secure over TLS, 12 hours; POST /ui/logout
// revokes it). The cookie never carries the token. A cookie authenticates a write (any method but GET/HEAD) only
// with the header the dashboard's own scripts send, `X-Gdrbench-Request: 1`,
// which a form on another site cannot add (OWASP's custom-request-header
// defence against cross-site request forgery, on top of SameSite).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/api/auth.h"

namespace gdrbench::server::api {

inline constexpr char kSessionCookie[] = "gdrbench_token";
inline constexpr char kRequestHeader[] = "X-Gdrbench-Request";

struct HttpCredentials {
  std::string_view method;          // "GET", "POST", ...
  std::string_view authorization;   // the Authorization header ("" if none)
  std::string_view cookie;          // the Cookie header ("" if none)
  std::string_view request_header;  // X-Gdrbench-Request ("" if none)
};

// As Authorizer::Check; PERMISSION_DENIED for a cookie-authenticated write
// without X-Gdrbench-Request.
absl::StatusOr<Principal> AuthenticateHttp(const Authorizer& auth, const HttpCredentials& c, Role needed);

// The value of cookie `name` in a Cookie header, percent-decoded; "" if absent.
std::string CookieValue(std::string_view cookie_header, std::string_view name);
// A Set-Cookie value that stores a session id (SessionStore::Open) for the
// dashboard, as long as the session lives.
std::string SessionCookie(std::string_view session_id, bool secure);
// A Set-Cookie value that removes it.
std::string ClearedSessionCookie(bool secure);

}  // namespace gdrbench::server::api
