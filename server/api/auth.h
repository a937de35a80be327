// Bearer tokens with two roles, from a file: one token per line,
//   ROLE TOKEN [NAME]       ROLE: read | write; NAME: who it is (logs, set_by)
// '#' starts a comment. A read token may call every read (GETs, the
// dashboard, /metrics); a write token also submit, upload, baseline and
// cancel. Tokens must be at least 16 characters. Compared in constant time.
// Without a token file (only allowed with --insecure) every caller is the
// anonymous writer.
// Thread safety: immutable after Load.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/api/sessions.h"

namespace gdrbench::server::api {

enum class Role { kRead = 0, kWrite = 1 };

struct Principal {
  std::string name;
  Role role = Role::kRead;
};

class Authorizer {
 public:
  // No tokens: everyone is "anonymous" with the write role.
  static Authorizer AllowAll();
  // INVALID_ARGUMENT naming the file and line for a bad line; NOT_FOUND /
  // PERMISSION_DENIED when the file cannot be read.
  static absl::StatusOr<Authorizer> Load(const std::string& path);
  static absl::StatusOr<Authorizer> Parse(std::string_view text, const std::string& source);

  // `authorization`: the header or metadata value ("Bearer T").
  // UNAUTHENTICATED when it is missing or unknown, PERMISSION_DENIED when
  // the token's role is below `needed`.
  absl::StatusOr<Principal> Check(std::string_view authorization, Role needed) const;
  bool open() const { return open_; }
  // The dashboard's sessions (sessions.h), shared by the copies of this
  // Authorizer.
  SessionStore& sessions() const { return *sessions_; }

 private:
  struct Token {
    std::string secret;
    Principal who;
  };
  bool open_ = false;
  std::vector<Token> tokens_;
  std::shared_ptr<SessionStore> sessions_ = std::make_shared<SessionStore>();
};

}  // namespace gdrbench::server::api
