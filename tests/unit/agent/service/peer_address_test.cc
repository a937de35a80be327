// Peers as accept() and gRPC name them, the client a budget is counted
// against, and --controller-cidr ranges. The gRPC peer forms are those of
// grpc_sockaddr_to_uri (src/core/lib/address_utils/sockaddr_utils.cc in
// gRPC 1.51): "ipv4:A:P", "ipv6:[A]:P", and the URI-escaped brackets of
// later releases.
#include "agent/service/peer_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::agent::service {
namespace {

using ::testing::HasSubstr;

TEST(PeerAddress, GrpcPeersOfBothFamiliesParse) {
  auto v4 = PeerFromGrpc("ipv4:192.0.2.7:40123");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->Key(), "192.0.2.7:40123");
  EXPECT_EQ(v4->Client(), "192.0.2.7");
  for (const char* p : {"ipv6:[2001:db8:1:2:3:4:5:6]:443", "ipv6:%5B2001:db8:1:2:3:4:5:6%5D:443",
                        "ipv6:[2001:0db8:1:2:3:4:5:6]:443"}) {
    auto v6 = PeerFromGrpc(p);
    ASSERT_TRUE(v6.ok()) << p << ": " << v6.status();
    EXPECT_EQ(v6->Key(), "[2001:db8:1:2:3:4:5:6]:443") << p;
    EXPECT_EQ(v6->Client(), "2001:db8:1:2::/64") << p;
  }
}

TEST(PeerAddress, AnIpv4MappedPeerIsIpv4FromBothSides) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(5000);
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:10.1.2.3", &a.sin6_addr), 1);
  auto from_accept = PeerFromSockaddr(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ASSERT_TRUE(from_accept.ok());
  EXPECT_EQ(from_accept->Key(), "10.1.2.3:5000");
  auto from_grpc = PeerFromGrpc("ipv6:[::ffff:10.1.2.3]:5000");
  ASSERT_TRUE(from_grpc.ok());
  EXPECT_EQ(from_grpc->Key(), from_accept->Key());
}

TEST(PeerAddress, AnIpv4SockaddrMatchesGrpcsName) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(7070);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto p = PeerFromSockaddr(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Key(), PeerFromGrpc("ipv4:127.0.0.1:7070")->Key());
}

TEST(PeerAddress, OtherPeersAreRefused) {
  for (const char* p : {"unix:/tmp/sock", "ipv4:1.2.3.4", "ipv4:1.2.3.4:99999", "ipv4:host:1", "", "ipv6:[::1:1"}) {
    EXPECT_FALSE(PeerFromGrpc(p).ok()) << p;
  }
  sockaddr s{};
  s.sa_family = AF_UNIX;
  EXPECT_THAT(PeerFromSockaddr(&s, sizeof(s)).status().message(), HasSubstr("not TCP over IPv4 or IPv6"));
}

TEST(Cidr, RangesContainTheirAddressesOnly) {
  auto net = Cidr::Parse("10.1.0.0/16");
  ASSERT_TRUE(net.ok());
  EXPECT_TRUE(net->Contains(*PeerFromGrpc("ipv4:10.1.255.3:1")));
  EXPECT_TRUE(net->Contains(*PeerFromGrpc("ipv6:[::ffff:10.1.0.1]:1")));
  EXPECT_FALSE(net->Contains(*PeerFromGrpc("ipv4:10.2.0.1:1")));
  EXPECT_FALSE(net->Contains(*PeerFromGrpc("ipv6:[::a01:1]:1")));  // not mapped: another family
  auto host = Cidr::Parse("192.0.2.9");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->text(), "192.0.2.9/32");
  EXPECT_FALSE(host->Contains(*PeerFromGrpc("ipv4:192.0.2.8:1")));
  auto v6 = Cidr::Parse("2001:db8::/32");
  ASSERT_TRUE(v6.ok());
  EXPECT_TRUE(v6->Contains(*PeerFromGrpc("ipv6:[2001:db8:ffff::1]:1")));
  EXPECT_FALSE(v6->Contains(*PeerFromGrpc("ipv6:[2001:db9::1]:1")));
  auto all = Cidr::Parse("0.0.0.0/0");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Contains(*PeerFromGrpc("ipv4:203.0.113.1:1")));
}

TEST(Cidr, BadRangesAreRefusedNamingThem) {
  EXPECT_THAT(Cidr::Parse("10.0.0.0/33").status().message(),
              HasSubstr("--controller-cidr '10.0.0.0/33' has a prefix length outside 0..32"));
  EXPECT_THAT(Cidr::Parse("controller.example").status().message(),
              HasSubstr("is not an IPv4 or IPv6 address[/prefix]"));
  EXPECT_THAT(Cidr::Parse("10.1.2.3/8").status().message(),
              HasSubstr("has address bits set past /8 (did you mean 10.0.0.0/8?)"));
  EXPECT_FALSE(Cidr::Parse("10.0.0.0/").ok());
  EXPECT_FALSE(Cidr::Parse("2001:db8::/129").ok());
}

}  // namespace
}  // namespace gdrbench::agent::service
