// A TCP peer of the agent as admission control sees it: the address and port
// of one connection, the client it is counted against, and the operator's
// --controller-cidr ranges. Pure: no sockets, no gRPC.
//
// Thread safety: plain values; functions are reentrant.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gdrbench::agent::service {

struct PeerAddress {
  bool v6 = false;                 // false: an IPv4 address (also one mapped into IPv6)
  std::array<uint8_t, 16> ip{};    // IPv4 in the first 4 bytes
  uint16_t port = 0;

  // "1.2.3.4:5" or "[2001:db8::1]:5": one connection (unique while it is open).
  std::string Key() const;
  // What budgets are counted against: the IPv4 address, or the IPv6 /64
  // ("2001:db8:1:2::/64"): one host of IPv6 usually owns a whole /64.
  std::string Client() const;
};

// From accept()'s address. An IPv4-mapped IPv6 address (a dual-stack socket)
// is IPv4, as gRPC reports it. INVALID_ARGUMENT for other families.
absl::StatusOr<PeerAddress> PeerFromSockaddr(const sockaddr* addr, socklen_t len);

// From grpc::ServerContext::peer(): "ipv4:1.2.3.4:5", "ipv6:[::1]:5" or its
// URI-escaped form "ipv6:%5B::1%5D:5". INVALID_ARGUMENT for anything else
// (a Unix socket peer, a malformed string).
absl::StatusOr<PeerAddress> PeerFromGrpc(std::string_view peer);

// An address range: "10.0.0.0/8", "2001:db8::/32", or one address (a /32 or
// /128). IPv4 ranges also match IPv4-mapped peers (PeerAddress is IPv4 then).
class Cidr {
 public:
  // INVALID_ARGUMENT naming `text` when it is not an address with an
  // optional prefix length in range, or has bits set past the prefix.
  static absl::StatusOr<Cidr> Parse(std::string_view text);
  bool Contains(const PeerAddress& peer) const;
  const std::string& text() const { return text_; }

 private:
  bool v6_ = false;
  std::array<uint8_t, 16> ip_{};
  int prefix_ = 0;
  std::string text_;
};

}  // namespace gdrbench::agent::service
