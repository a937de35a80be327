#include "agent/service/admission.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gdrbench::agent::service {
namespace {

// Clients named in one summary line; the rest are summed.
constexpr size_t kClientsPerLine = 8;
// Clients counted apart between two lines (a flood from many IPv6 /64s
// must not grow the table without bound); the rest are summed as "other".
constexpr size_t kMaxCountedClients = 1024;
constexpr const char* kOther = "other addresses";

const char* ReasonText(DropReason r) {
  switch (r) {
    case DropReason::kPerAddressBudget: return "address budget full";
    case DropReason::kTotalBudget: return "total budget full";
    case DropReason::kHandshakeDeadline: return "no call within the handshake deadline";
    case DropReason::kFdBudget: return "fd budget full";
    case DropReason::kOutOfFds: return "out of fds";
  }
  return "?";
}

}  // namespace

absl::StatusOr<Admission> Admission::Create(AdmissionConfig config, Clock::time_point now) {
  if (config.handshake_deadline <= std::chrono::milliseconds(0)) {
    return absl::InvalidArgumentError("--handshake-deadline-s must be positive");
  }
  if (config.total < 1) return absl::InvalidArgumentError("--unauthenticated-total must be at least 1");
  if (config.per_address < 1 || config.per_address > config.total) {
    return absl::InvalidArgumentError(absl::StrCat("--unauthenticated-per-address must be 1..",
                                                   config.total, " (--unauthenticated-total)"));
  }
  if (config.log_interval <= std::chrono::milliseconds(0)) {
    return absl::InvalidArgumentError("the admission log interval must be positive");
  }
  return Admission(std::move(config), now);
}

int Admission::PoolOf(const PeerAddress& peer) const {
  for (const Cidr& c : config_.controller_cidrs) {
    if (c.Contains(peer)) return 1;
  }
  return 0;
}

Admission::ConnId Admission::Victim(const Pool& pool, const std::string* client) const {
  if (client != nullptr) return *pool.by_client.at(*client).begin();
  size_t heaviest = 0;
  ConnId victim = 0;
  for (const auto& [name, ids] : pool.by_client) {
    ConnId oldest = *ids.begin();
    if (ids.size() > heaviest || (ids.size() == heaviest && oldest < victim)) {
      heaviest = ids.size();
      victim = oldest;
    }
  }
  return victim;
}

std::vector<Admission::Drop> Admission::Admit(ConnId id, const PeerAddress& peer,
                                              Clock::time_point now, const IsAlive& alive) {
  std::string key = peer.Key();
  // The same address and port again: the connection that had them is closed.
  if (auto it = by_key_.find(key); it != by_key_.end()) Forget(it->second);
  Conn c{key, peer.Client(), PoolOf(peer), now, false};
  Pool& pool = pools_[c.pool];
  std::vector<Drop> drops;
  auto make_room = [&](DropReason reason, const std::string* client, auto full) {
    while (full()) {
      ConnId victim = Victim(pool, client);
      if (alive(victim)) {
        Count(conns_.at(victim).client, reason);
        drops.push_back({victim, reason});
      }
      Forget(victim);
    }
  };
  make_room(DropReason::kPerAddressBudget, &c.client, [&] {
    auto it = pool.by_client.find(c.client);
    return it != pool.by_client.end() && static_cast<int>(it->second.size()) >= config_.per_address;
  });
  make_room(DropReason::kTotalBudget, nullptr, [&] { return pool.count >= config_.total; });
  pool.by_client[c.client].insert(id);
  ++pool.count;
  by_key_[key] = id;
  conns_[id] = std::move(c);
  return drops;
}

bool Admission::Authenticate(const std::string& peer_key) {
  auto it = by_key_.find(peer_key);
  if (it == by_key_.end()) return false;
  Conn& c = conns_.at(it->second);
  if (c.authenticated) return false;
  Pool& pool = pools_[c.pool];
  auto client = pool.by_client.find(c.client);
  client->second.erase(it->second);
  if (client->second.empty()) pool.by_client.erase(client);
  --pool.count;
  c.authenticated = true;
  return true;
}

void Admission::Forget(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  const Conn& c = it->second;
  if (!c.authenticated) {
    Pool& pool = pools_[c.pool];
    auto client = pool.by_client.find(c.client);
    client->second.erase(id);
    if (client->second.empty()) pool.by_client.erase(client);
    --pool.count;
  }
  if (auto k = by_key_.find(c.key); k != by_key_.end() && k->second == id) by_key_.erase(k);
  conns_.erase(it);
}

std::vector<Admission::Drop> Admission::Expire(Clock::time_point now, const IsAlive& alive) {
  std::vector<ConnId> past;
  for (const Pool& pool : pools_) {
    for (const auto& [client, ids] : pool.by_client) {
      for (ConnId id : ids) {  // oldest first: stop at the first still in time
        if (conns_.at(id).since + config_.handshake_deadline > now) break;
        past.push_back(id);
      }
    }
  }
  std::vector<Drop> drops;
  for (ConnId id : past) {
    if (alive(id)) {
      Count(conns_.at(id).client, DropReason::kHandshakeDeadline);
      drops.push_back({id, DropReason::kHandshakeDeadline});
    }
    Forget(id);
  }
  return drops;
}

std::optional<Admission::Clock::time_point> Admission::NextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const Pool& pool : pools_) {
    for (const auto& [client, ids] : pool.by_client) {
      Clock::time_point t = conns_.at(*ids.begin()).since + config_.handshake_deadline;
      if (!next || t < *next) next = t;
    }
  }
  return next;
}

void Admission::CountRefused(const PeerAddress& peer, DropReason reason) { Count(peer.Client(), reason); }

void Admission::Count(const std::string& client, DropReason reason) {
  ++dropped_total_;
  auto it = refused_.find(client);
  if (it == refused_.end()) {
    const std::string& name = refused_.size() < kMaxCountedClients ? client : kOther;
    it = refused_.try_emplace(name).first;
  }
  ++it->second[static_cast<int>(reason)];
}

std::optional<std::string> Admission::TakeSummary(Clock::time_point now) {
  if (refused_.empty() || now - last_summary_ < config_.log_interval) return std::nullopt;
  std::vector<std::pair<uint64_t, std::string>> clients;  // (count, "ADDR: N reason, ...")
  uint64_t total = 0;
  for (const auto& [client, counts] : refused_) {
    uint64_t n = 0;
    std::vector<std::string> parts;
    for (int r = 0; r < kDropReasons; ++r) {
      if (counts[r] == 0) continue;
      n += counts[r];
      parts.push_back(absl::StrCat(counts[r], " ", ReasonText(static_cast<DropReason>(r))));
    }
    total += n;
    clients.emplace_back(n, absl::StrCat(client, " ", n, " (", absl::StrJoin(parts, ", "), ")"));
  }
  std::sort(clients.begin(), clients.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<std::string> named;
  for (size_t i = 0; i < clients.size() && i < kClientsPerLine; ++i) named.push_back(clients[i].second);
  std::string more = clients.size() > kClientsPerLine
                         ? absl::StrCat("; and ", clients.size() - kClientsPerLine, " more clients")
                         : "";
  double seconds = std::chrono::duration<double>(config_.log_interval).count();
  std::string line = absl::StrCat(
      config_.port_name, ": refused or dropped ", total, " unauthenticated connections from ",
      clients.size(), " clients (at most one line per ", seconds, " s; ", unauthenticated(),
      " unauthenticated and ", authenticated(), " authenticated open): ", absl::StrJoin(named, "; "), more);
  refused_.clear();
  last_summary_ = now;
  return line;
}

}  // namespace gdrbench::agent::service
