#include "server/api/auth.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace gdrbench::server::api {
namespace {

// Equal without an early exit: the time does not tell how much matched.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

}  // namespace

Authorizer Authorizer::AllowAll() {
  Authorizer a;
  a.open_ = true;
  return a;
}

absl::StatusOr<Authorizer> Authorizer::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoToStatus(errno, absl::StrCat("--tokens ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

absl::StatusOr<Authorizer> Authorizer::Parse(std::string_view text, const std::string& source) {
  Authorizer a;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_no;
    if (auto hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (f.empty()) continue;
    const std::string where = absl::StrCat(source, ":", line_no);
    if (f.size() < 2 || f.size() > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected 'ROLE TOKEN [NAME]' (ROLE read or write)"));
    }
    Token t;
    if (f[0] == "read") {
      t.who.role = Role::kRead;
    } else if (f[0] == "write") {
      t.who.role = Role::kWrite;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, ": role '", f[0], "' is not read or write"));
    }
    t.secret = std::string(f[1]);
    if (t.secret.size() < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the token is shorter than 16 characters (make one with: openssl rand -hex 24)"));
    }
    t.who.name = f.size() == 3 ? std::string(f[2]) : absl::StrCat(f[0], "@line", line_no);
    for (const Token& o : a.tokens_) {
      if (o.secret == t.secret) return absl::InvalidArgumentError(absl::StrCat(where, ": the same token is listed twice"));
    }
    a.tokens_.push_back(std::move(t));
  }
  if (a.tokens_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no token (expected 'ROLE TOKEN [NAME]' lines)"));
  }
  return a;
}

absl::StatusOr<Principal> Authorizer::Check(std::string_view authorization, Role needed) const {
  if (open_) return Principal{"anonymous", Role::kWrite};
  absl::string_view h(authorization.data(), authorization.size());
  h = absl::StripAsciiWhitespace(h);
  if (h.empty()) {
    return absl::UnauthenticatedError("no bearer token: send 'Authorization: Bearer TOKEN'");
  }
  if (!absl::StartsWithIgnoreCase(h, "bearer ")) {
    return absl::UnauthenticatedError("the Authorization header is not 'Bearer TOKEN'");
  }
  absl::string_view secret = absl::StripAsciiWhitespace(h.substr(7));
  const Token* found = nullptr;
  for (const Token& t : tokens_) {
    if (SameSecret(std::string_view(secret.data(), secret.size()), t.secret)) found = &t;
  }
  if (found == nullptr) return absl::UnauthenticatedError("the bearer token is not known to this server");
  if (found->who.role < needed) {
    return absl::PermissionDeniedError(
        absl::StrCat("token '", found->who.name, "' has the read role; this call needs a write token"));
  }
  return found->who;
}

}  // namespace gdrbench::server::api
