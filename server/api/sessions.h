// The dashboard's sessions (issue 31, low 11): a login gets a random id (256
// bits from OpenSSL's RAND_bytes, as hex) kept here with who logged in, for
// kLifetime; logout revokes it. The session cookie carries the id, never
// the token: a cookie copied from a browser dies with its session.
// At most kMaxSessions are kept (the oldest go first): logins need a valid
// token, so this bounds a buggy client, not an anonymous one.
// Thread safety: every method from any thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gdrbench::server::api {

struct Principal;
enum class Role;  // auth.h

class SessionStore {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::hours kLifetime{12};
  static constexpr size_t kMaxSessions = 10000;

  explicit SessionStore(std::function<Clock::time_point()> now = Clock::now) : now_(std::move(now)) {}
  // A new session of `who`; INTERNAL when no random bytes can be had.
  absl::StatusOr<std::string> Open(const Principal& who);
  // nullopt: unknown, expired or revoked.
  std::optional<Principal> Find(std::string_view id);
  void Revoke(std::string_view id);

 private:
  struct Session {
    std::string name;
    Role role;
    Clock::time_point expires;
  };
  std::function<Clock::time_point()> now_;
  std::mutex mu_;
  std::map<std::string, Session, std::less<>> by_id_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace gdrbench::server::api
