// /proc/net/arp parsing and the neighbour warm-up's no-op cases (neighbour.h).
#include "agent/verbs/neighbour.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace gdrbench::agent::verbs {
namespace {

using ::testing::HasSubstr;

// The example of proc(5), /proc/net/arp (Linux man-pages 6.03, Debian 12's
// `manpages` package): one complete entry (flags 0x2, ATF_COM) and one
// published permanent entry without a hardware address (0xc = ATF_PERM |
// ATF_PUBL). The man page aligns the columns with fewer spaces than the
// kernel's "%-16s 0x%-10x0x%-10x%-17s     *        %s" (net/ipv4/arp.c,
// arp_format_neigh_entry); the parser splits on runs of spaces, so both read.
constexpr char kProc5Example[] =
    "IP address     HW type   Flags     HW address          Mask   Device\n"
    "192.168.0.50   0x1       0x2       00:50:BF:25:68:F3   *      eth0\n"
    "192.168.0.250  0x1       0xc       00:00:00:00:00:00   *      eth0\n";

TEST(ParseProcNetArp, ReadsTheProc5Example) {
  auto e = ParseProcNetArp(kProc5Example);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].ip, "192.168.0.50");
  EXPECT_EQ((*e)[0].hw_type, 1u);
  EXPECT_EQ((*e)[0].flags, 0x2u);
  EXPECT_EQ((*e)[0].hw_address, "00:50:BF:25:68:F3");
  EXPECT_EQ((*e)[0].device, "eth0");
  EXPECT_EQ((*e)[1].flags, 0xcu);
}

TEST(ParseProcNetArp, CompleteOnlyWithAtfComOnThatDevice) {
  auto e = ParseProcNetArp(kProc5Example);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(ArpComplete(*e, "192.168.0.50", "eth0"));
  EXPECT_FALSE(ArpComplete(*e, "192.168.0.250", "eth0"));  // 0xc: no ATF_COM
  EXPECT_FALSE(ArpComplete(*e, "192.168.0.50", "eth1"));   // another device's table
  EXPECT_FALSE(ArpComplete(*e, "192.168.0.51", "eth0"));
}

TEST(ParseProcNetArp, HeaderOnlyIsAnEmptyTable) {
  auto e = ParseProcNetArp("IP address       HW type     Flags       HW address            Mask     Device\n");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty());
}

TEST(ParseProcNetArp, MalformedInputIsAClearError) {
  auto no_header = ParseProcNetArp("192.168.0.50   0x1   0x2   00:50:BF:25:68:F3   *   eth0\n");
  EXPECT_EQ(no_header.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_header.status().message(), HasSubstr("header"));
  auto short_row = ParseProcNetArp(std::string(kProc5Example) + "10.0.0.1 0x1 0x2\n");
  EXPECT_EQ(short_row.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_row.status().message(), HasSubstr("line 4"));
  auto bad_flags = ParseProcNetArp(
      "IP address HW type Flags HW address Mask Device\n10.0.0.1 0x1 two 00:11:22:33:44:55 * eth0\n");
  EXPECT_EQ(bad_flags.status().code(), absl::StatusCode::kInvalidArgument);
  auto bad_ip = ParseProcNetArp(
      "IP address HW type Flags HW address Mask Device\n10.0.0.300 0x1 0x2 00:11:22:33:44:55 * eth0\n");
  EXPECT_EQ(bad_ip.status().code(), absl::StatusCode::kInvalidArgument);
}

std::array<uint8_t, 16> Mapped(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  std::array<uint8_t, 16> g{};
  g[10] = g[11] = 0xff;
  g[12] = a;
  g[13] = b;
  g[14] = c;
  g[15] = d;
  return g;
}

TEST(MappedIpv4, OnlyIpv4MappedGids) {
  EXPECT_EQ(MappedIpv4(Mapped(10, 0, 0, 2)), "10.0.0.2");
  std::array<uint8_t, 16> link_local{0xfe, 0x80};
  EXPECT_EQ(MappedIpv4(link_local), std::nullopt);
  std::array<uint8_t, 16> zero{};
  EXPECT_EQ(MappedIpv4(zero), std::nullopt);
}

// A captured root (FsRoot) with the given /proc/net/arp.
class ArpRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) /
            ("arp-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_ / "proc/net");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& text) { std::ofstream(root_ / "proc/net/arp") << text; }
  std::filesystem::path root_;
};

TEST_F(ArpRoot, AlreadyCompleteSendsNothing) {
  Write(
      "IP address       HW type     Flags       HW address            Mask     Device\n"
      "10.0.0.2         0x1         0x2         02:00:00:00:00:02     *        veth1\n");
  auto w = WarmNeighbour(FsRoot(root_.string()), "veth1", Mapped(10, 0, 0, 1), Mapped(10, 0, 0, 2), 100);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(w->needed);
  EXPECT_TRUE(w->resolved);
  EXPECT_EQ(w->datagrams, 0);
  EXPECT_THAT(w->detail, HasSubstr("already resolved"));
}

TEST_F(ArpRoot, NonIpv4GidIsANoOp) {
  Write("garbage that is never read\n");
  std::array<uint8_t, 16> ib_gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  auto w = WarmNeighbour(FsRoot(root_.string()), "ib0", ib_gid, ib_gid, 100);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(w->needed);
  EXPECT_EQ(w->datagrams, 0);
}

TEST_F(ArpRoot, UnreadableTableIsAnError) {
  std::filesystem::remove(root_ / "proc/net/arp");
  auto w = WarmNeighbour(FsRoot(root_.string()), "veth1", Mapped(10, 0, 0, 1), Mapped(10, 0, 0, 2), 100);
  EXPECT_FALSE(w.ok());
  Write("not the arp table\n");
  w = WarmNeighbour(FsRoot(root_.string()), "veth1", Mapped(10, 0, 0, 1), Mapped(10, 0, 0, 2), 100);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
}

// /proc/net/route as captured on this project's build machine (Debian 12,
// kernel 6.x: `cat /proc/net/route`, trailing padding cut): a default route
// through 192.0.2.1 and the on-link 192.0.2.0/24, the addresses printed as
// the little-endian numbers of their network-order bytes.
constexpr char kRouteCapture[] =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";

TEST(ParseProcNetRoute, ReadsTheCapturedTable) {
  auto r = ParseProcNetRoute(kRouteCapture);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].device, "eth0");
  EXPECT_EQ((*r)[0].flags, 0x3u);
  EXPECT_EQ((*r)[1].mask, 0x00FFFFFFu);
  EXPECT_FALSE(ParseProcNetRoute("eth0\t0\n").ok());
  EXPECT_FALSE(ParseProcNetRoute("Iface\tDestination\neth0\tzz\n").ok());
}

// Routed RoCE: a peer in another subnet is reached through the gateway,
// whose neighbour entry is the one to wait for; an on-link peer's is its own.
TEST(NextHop, AnOffLinkPeerIsReachedThroughTheGateway) {
  auto r = ParseProcNetRoute(kRouteCapture);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(NextHop(*r, "198.51.100.7", "eth0"), "192.0.2.1");
  EXPECT_EQ(NextHop(*r, "192.0.2.9", "eth0"), "192.0.2.9");
  EXPECT_EQ(NextHop(*r, "198.51.100.7", "eth1"), "198.51.100.7");  // no route of that device
}

}  // namespace
}  // namespace gdrbench::agent::verbs
