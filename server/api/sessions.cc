#include "server/api/sessions.h"

#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "server/api/auth.h"

namespace gdrbench::server::api {

absl::StatusOr<std::string> SessionStore::Open(const Principal& who) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return absl::InternalError("RAND_bytes failed: no session id");
  std::string id = absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  std::lock_guard l(mu_);
  const Clock::time_point now = now_();
  // The oldest first: gone (revoked), expired, or over the cap.
  while (!order_.empty()) {
    auto front = by_id_.find(order_.front());
    if (front != by_id_.end() && now < front->second.expires && by_id_.size() < kMaxSessions) break;
    if (front != by_id_.end()) by_id_.erase(front);
    order_.pop_front();
  }
  by_id_[id] = Session{who.name, who.role, now + kLifetime};
  order_.push_back(id);
  return id;
}

std::optional<Principal> SessionStore::Find(std::string_view id) {
  std::lock_guard l(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  if (now_() >= it->second.expires) {
    by_id_.erase(it);  // its id leaves order_ when it comes first (Open)
    return std::nullopt;
  }
  return Principal{it->second.name, it->second.role};
}

void SessionStore::Revoke(std::string_view id) {
  std::lock_guard l(mu_);
  auto it = by_id_.find(id);
  if (it != by_id_.end()) by_id_.erase(it);
}

}  // namespace gdrbench::server::api
