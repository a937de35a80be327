// Which connections the agent keeps when unauthenticated clients crowd it.
//
// A connection is "unauthenticated" from accept until a call arrives on it
// (with mTLS that implies a valid client certificate; on a plaintext or
// TLS-only agent it means the client speaks gRPC). Unauthenticated
// connections have a deadline and budgets of their own; authenticated ones
// are never dropped here, so a controller that got in stays in, and the room
// left by the budgets (limits::kMaxConnections less them) is theirs.
//
//  - Per client (an IPv4 address, an IPv6 /64): at most `per_address`. A new
//    connection past it drops that client's oldest.
//  - All clients of a pool: at most `total`. A new connection past it drops
//    the oldest connection of the client holding the most (the oldest of all
//    when they hold as many): a few flooding addresses cannot push out a
//    lone controller's connection while it completes its handshake.
//  - Addresses in `controller_cidrs` are a second pool with the same
//    budgets, which clients outside the ranges cannot touch.
//  - No call within `handshake_deadline` of accept: dropped.
// Everything dropped or refused is summed per client and reason and comes
// out as one log line per `log_interval` (TakeSummary).
//
// Connections are named by ConnId, given by the caller, increasing in the
// order of Admit. The caller owns the sockets: it passes `alive` (is this
// connection still open?) so that a connection already closed is forgotten
// rather than dropped, and it closes what Admit/Expire return.
//
// Thread safety: none; the caller serialises (agent/service/listener.h).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/service/peer_address.h"
#include "common/limits.h"

namespace gdrbench::agent::service {

struct AdmissionConfig {
  std::chrono::milliseconds handshake_deadline{limits::kHandshakeDeadlineMs};
  int per_address = limits::kUnauthenticatedPerAddress;
  int total = limits::kUnauthenticatedTotal;
  std::vector<Cidr> controller_cidrs;  // empty: one pool
  std::chrono::milliseconds log_interval{limits::kAdmissionLogIntervalMs};
  std::string port_name = "agent port";  // in the log line
};

enum class DropReason {
  kPerAddressBudget,   // the client's unauthenticated budget was full
  kTotalBudget,        // all clients' unauthenticated budget was full
  kHandshakeDeadline,  // no call within the deadline
  kFdBudget,           // the process's fd budget was full (listener.h)
  kOutOfFds,           // accept failed with EMFILE/ENFILE
};
inline constexpr int kDropReasons = 5;

class Admission {
 public:
  using Clock = std::chrono::steady_clock;
  using ConnId = uint64_t;
  using IsAlive = std::function<bool(ConnId)>;
  struct Drop {
    ConnId id;
    DropReason reason;
  };

  // INVALID_ARGUMENT naming the flag when a budget or the deadline is not
  // positive, or per_address exceeds total.
  static absl::StatusOr<Admission> Create(AdmissionConfig config, Clock::time_point now);

  // A new connection `id` from `peer` at `now`. Returns the connections to
  // close so that it fits within the budgets (forgotten and counted here);
  // `alive` is asked about each before it is chosen.
  std::vector<Drop> Admit(ConnId id, const PeerAddress& peer, Clock::time_point now,
                          const IsAlive& alive);
  // A call arrived from `peer` (PeerAddress::Key()). true when this turned
  // an unauthenticated connection into an authenticated one.
  bool Authenticate(const std::string& peer_key);
  // Unauthenticated connections past their deadline (those still alive).
  std::vector<Drop> Expire(Clock::time_point now, const IsAlive& alive);
  // The connection is closed (the caller saw it go); unknown ids are ignored.
  void Forget(ConnId id);
  // When the next unauthenticated connection passes its deadline.
  std::optional<Clock::time_point> NextDeadline() const;
  // A connection refused before it was admitted (the fd budget, EMFILE).
  void CountRefused(const PeerAddress& peer, DropReason reason);
  // One line about what was refused or dropped since the last line, when
  // there was some and `log_interval` has passed since that line (the first
  // comes at once); otherwise nothing.
  std::optional<std::string> TakeSummary(Clock::time_point now);

  int unauthenticated() const { return pools_[0].count + pools_[1].count; }
  int authenticated() const { return static_cast<int>(conns_.size()) - unauthenticated(); }
  uint64_t dropped_total() const { return dropped_total_; }

 private:
  struct Conn {
    std::string key;     // PeerAddress::Key()
    std::string client;  // PeerAddress::Client()
    int pool = 0;
    Clock::time_point since;
    bool authenticated = false;
  };
  // A pool's unauthenticated connections per client, oldest first.
  struct Pool {
    std::map<std::string, std::set<ConnId>> by_client;
    int count = 0;
  };

  explicit Admission(AdmissionConfig config, Clock::time_point now)
      : config_(std::move(config)), last_summary_(now - config_.log_interval) {}
  int PoolOf(const PeerAddress& peer) const;
  // The connection a full pool gives up: the oldest of its heaviest client,
  // or of `client` when only that client's budget is meant.
  ConnId Victim(const Pool& pool, const std::string* client) const;
  void Count(const std::string& client, DropReason reason);

  AdmissionConfig config_;
  std::unordered_map<ConnId, Conn> conns_;
  std::unordered_map<std::string, ConnId> by_key_;
  std::array<Pool, 2> pools_;  // [1]: controller_cidrs
  std::map<std::string, std::array<uint64_t, kDropReasons>> refused_;  // since the last summary
  Clock::time_point last_summary_;
  uint64_t dropped_total_ = 0;
};

}  // namespace gdrbench::agent::service
