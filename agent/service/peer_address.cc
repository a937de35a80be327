#include "agent/service/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace gdrbench::agent::service {
namespace {

constexpr uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

std::string IpText(bool v6, const std::array<uint8_t, 16>& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, ip.data(), buf, sizeof(buf));
  return buf;
}

// Parses a bare address (no brackets); false when it is none.
bool ParseIp(const std::string& text, bool* v6, std::array<uint8_t, 16>* ip) {
  ip->fill(0);
  if (inet_pton(AF_INET, text.c_str(), ip->data()) == 1) {
    *v6 = false;
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), ip->data()) != 1) return false;
  *v6 = true;
  if (std::memcmp(ip->data(), kV4MappedPrefix, sizeof(kV4MappedPrefix)) == 0) {
    std::memmove(ip->data(), ip->data() + 12, 4);
    std::memset(ip->data() + 4, 0, 12);
    *v6 = false;
  }
  return true;
}

}  // namespace

std::string PeerAddress::Key() const {
  return v6 ? absl::StrCat("[", IpText(true, ip), "]:", port) : absl::StrCat(IpText(false, ip), ":", port);
}

std::string PeerAddress::Client() const {
  if (!v6) return IpText(false, ip);
  std::array<uint8_t, 16> net{};
  std::memcpy(net.data(), ip.data(), 8);
  return absl::StrCat(IpText(true, net), "/64");
}

absl::StatusOr<PeerAddress> PeerFromSockaddr(const sockaddr* addr, socklen_t len) {
  PeerAddress p;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    std::memcpy(p.ip.data(), &a->sin_addr, 4);
    p.port = ntohs(a->sin_port);
    return p;
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    std::memcpy(p.ip.data(), &a->sin6_addr, 16);
    p.port = ntohs(a->sin6_port);
    p.v6 = true;
    if (std::memcmp(p.ip.data(), kV4MappedPrefix, sizeof(kV4MappedPrefix)) == 0) {
      std::memmove(p.ip.data(), p.ip.data() + 12, 4);
      std::memset(p.ip.data() + 4, 0, 12);
      p.v6 = false;
    }
    return p;
  }
  return absl::InvalidArgumentError(absl::StrCat("a peer of address family ", addr->sa_family,
                                                 " is not TCP over IPv4 or IPv6"));
}

absl::StatusOr<PeerAddress> PeerFromGrpc(std::string_view peer_view) {
  std::string peer(peer_view);
  auto bad = [&] { return absl::InvalidArgumentError(absl::StrCat("'", peer, "' is not a gRPC TCP peer")); };
  std::string rest;
  if (peer.substr(0, 5) == "ipv4:" || peer.substr(0, 5) == "ipv6:") {
    rest = absl::StrReplaceAll(peer.substr(5), {{"%5B", "["}, {"%5D", "]"}, {"%5b", "["}, {"%5d", "]"}});
  } else {
    return bad();
  }
  auto colon = rest.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(rest.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return bad();
  }
  std::string host = rest.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  PeerAddress p;
  if (!ParseIp(host, &p.v6, &p.ip)) return bad();
  p.port = static_cast<uint16_t>(port);
  return p;
}

absl::StatusOr<Cidr> Cidr::Parse(std::string_view text) {
  std::string s(text);
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("--controller-cidr '", s, "' ", why));
  };
  auto slash = s.find('/');
  Cidr c;
  if (!ParseIp(s.substr(0, slash), &c.v6_, &c.ip_)) return bad("is not an IPv4 or IPv6 address[/prefix]");
  int max = c.v6_ ? 128 : 32;
  c.prefix_ = max;
  if (slash != std::string::npos &&
      (!absl::SimpleAtoi(s.substr(slash + 1), &c.prefix_) || c.prefix_ < 0 || c.prefix_ > max)) {
    return bad(absl::StrCat("has a prefix length outside 0..", max));
  }
  std::array<uint8_t, 16> net = c.ip_;
  for (int bit = c.prefix_; bit < max; ++bit) net[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  if (net != c.ip_) {
    return bad(absl::StrCat("has address bits set past /", c.prefix_, " (did you mean ",
                            IpText(c.v6_, net), "/", c.prefix_, "?)"));
  }
  c.text_ = absl::StrCat(IpText(c.v6_, c.ip_), "/", c.prefix_);
  return c;
}

bool Cidr::Contains(const PeerAddress& peer) const {
  if (peer.v6 != v6_) return false;
  for (int bit = 0; bit < prefix_; ++bit) {
    uint8_t mask = 0x80 >> (bit % 8);
    if ((peer.ip[bit / 8] & mask) != (ip_[bit / 8] & mask)) return false;
  }
  return true;
}

}  // namespace gdrbench::agent::service
