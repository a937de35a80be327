#include "server/api/http_auth.h"

#include <chrono>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gdrbench::server::api {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && Hex(s[i + 1]) >= 0 && Hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// RFC 6265 cookie-octets are printable ASCII without space, '"', ',', ';'
// and '\'; everything else (and '%') is percent-encoded.
std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\' && c != '%') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Attributes(bool secure) {
  return absl::StrCat("; Path=/; HttpOnly; SameSite=Strict", secure ? "; Secure" : "");
}

}  // namespace

std::string CookieValue(std::string_view header, std::string_view name) {
  for (absl::string_view part : absl::StrSplit(absl::string_view(header.data(), header.size()), ';')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos || part.substr(0, eq) != absl::string_view(name.data(), name.size())) continue;
    absl::string_view v = part.substr(eq + 1);
    return PercentDecode(std::string_view(v.data(), v.size()));
  }
  return "";
}

std::string SessionCookie(std::string_view session_id, bool secure) {
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(SessionStore::kLifetime).count();
  return absl::StrCat(kSessionCookie, "=", PercentEncode(session_id), Attributes(secure), "; Max-Age=", age);
}

std::string ClearedSessionCookie(bool secure) {
  return absl::StrCat(kSessionCookie, "=", Attributes(secure), "; Max-Age=0");
}

absl::StatusOr<Principal> AuthenticateHttp(const Authorizer& auth, const HttpCredentials& c, Role needed) {
  if (!c.authorization.empty() || c.cookie.empty() || auth.open()) return auth.Check(c.authorization, needed);
  const std::string id = CookieValue(c.cookie, kSessionCookie);
  if (id.empty()) return auth.Check("", needed);
  std::optional<Principal> who = auth.sessions().Find(id);
  if (!who) {
    return absl::UnauthenticatedError(
        "the dashboard's session is not known to this server (expired, logged out or restarted): log in again");
  }
  if (who->role < needed) {
    return absl::PermissionDeniedError(
        absl::StrCat("the session of '", who->name, "' has the read role; this call needs a write token"));
  }
  const bool read_only = c.method == "GET" || c.method == "HEAD";
  if (!read_only && c.request_header != "1") {
    return absl::PermissionDeniedError(absl::StrCat(
        "a ", std::string(c.method), " with the dashboard's cookie needs the ", kRequestHeader,
        ": 1 header (a request from another site is refused)"));
  }
  return *who;
}

}  // namespace gdrbench::server::api
