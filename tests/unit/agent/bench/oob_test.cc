// The out-of-band connection mode: GID choice, the RTR/RTS attributes, and
// the whole exchange (target published -> initiator connected -> target
// connected -> ready -> sweep -> verify) on the fake fabric.
#include "agent/bench/oob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "agent/bench/oob_session.h"
#include "tests/unit/agent/bench/fake_sessions.h"

namespace gdrbench::agent::bench {
namespace {

using ::testing::HasSubstr;
using testing::FakeRoceDevice;
using testing::FakeSessionFactory;

GidCandidate V4(uint32_t index, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t prefix,
                const char* type = "RoCE v2") {
  GidCandidate g{.index = index, .gid = {}, .type = type, .prefix_length = prefix};
  g.gid[10] = g.gid[11] = 0xff;
  g.gid[12] = a;
  g.gid[13] = b;
  g.gid[14] = c;
  g.gid[15] = d;
  return g;
}

GidCandidate LinkLocal(uint32_t index, uint8_t last) {
  GidCandidate g{.index = index, .gid = {}, .type = "RoCE v2", .prefix_length = 64};
  g.gid[0] = 0xfe;
  g.gid[1] = 0x80;
  g.gid[15] = last;
  return g;
}

// GID tables as the lab's rxe ports have them (index 0 the IPv6 link-local,
// index 1 ::ffff:10.0.0.K; deploy/lab/README.md) and as a RoCE NIC with
// several addresses and RoCE v1 entries has them (mlx5 lists v1 and v2 per
// address: index 2k = IB/RoCE v1, 2k+1 = RoCE v2).
TEST(ChooseGids, RoceV2GidsInOneSubnetAgreeOnBothEnds) {
  std::vector<GidCandidate> a = {LinkLocal(0, 1), V4(1, 10, 0, 0, 1, 24)};
  std::vector<GidCandidate> b = {LinkLocal(0, 2), V4(1, 10, 0, 0, 2, 24)};
  auto c = ChooseGids(a, b, true, std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->local_index, 1u);
  EXPECT_EQ(c->remote_index, 1u);
  EXPECT_TRUE(c->global);
  EXPECT_EQ(GidText(c->remote_gid), "::ffff:10.0.0.2");
  EXPECT_THAT(c->reason, HasSubstr("one subnet"));

  // Two subnets on one end, v1 entries first: the v2 entry of the shared
  // subnet wins, whatever its index.
  std::vector<GidCandidate> m = {V4(0, 192, 168, 1, 5, 24, "IB/RoCE v1"), V4(1, 192, 168, 1, 5, 24),
                                 V4(2, 10, 0, 0, 7, 24, "IB/RoCE v1"), V4(3, 10, 0, 0, 7, 24)};
  c = ChooseGids(m, b, true, std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->local_index, 3u);
  EXPECT_EQ(c->remote_index, 1u);
}

TEST(ChooseGids, OverrideAndNoCommonSubnetSaySo) {
  std::vector<GidCandidate> a = {LinkLocal(0, 1), V4(1, 10, 0, 0, 1, 24)};
  std::vector<GidCandidate> b = {LinkLocal(0, 2), V4(1, 10, 1, 0, 2, 24)};
  auto c = ChooseGids(a, b, true, std::nullopt);
  // Different /24s (rail 0 of one node, rail 1 of another, behind a router):
  // the IPv4 GIDs, routed, not the link-local ones they share (fe80::/64 is
  // not forwarded, RFC 4291 2.5.6: in the lab, oob across the spine with the
  // link-local pair failed at RTR with ETIMEDOUT; with index 1 it ran).
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->local_index, 1u);
  EXPECT_EQ(c->remote_index, 1u);
  EXPECT_EQ(GidText(c->remote_gid), "::ffff:10.1.0.2");
  EXPECT_THAT(c->reason, HasSubstr("different subnets (routed)"));
  // No IPv4 on the peer: the link-local pair still connects one link.
  c = ChooseGids(a, {LinkLocal(0, 2)}, true, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->local_index, 0u);
  EXPECT_THAT(c->reason, HasSubstr("one subnet"));
  c = ChooseGids({V4(1, 10, 0, 0, 1, 24)}, {LinkLocal(0, 2)}, true, std::nullopt);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("--gid-index"));
  c = ChooseGids(a, b, true, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->local_index, 1u);
  EXPECT_EQ(c->remote_index, 1u);
  c = ChooseGids(a, b, true, 5);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("GID index 5 is not populated"));
}

TEST(ChooseGids, InfiniBandUsesLidRoutingInOneSubnet) {
  GidCandidate a{.index = 0, .gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8},
                 .type = "", .prefix_length = 0};
  GidCandidate b = a;
  b.gid[15] = 9;
  auto c = ChooseGids({a}, {b}, false, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->global);
  b.gid[7] = 1;  // another subnet prefix
  c = ChooseGids({a}, {b}, false, std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->global);
}

TEST(QpAttributes, RtrAndRtsCarryThePeersAddressAndPerftestsValues) {
  PathParams p{.port = 1, .local_mtu_bytes = 4096, .remote_mtu_bytes = 1024, .qp_timeout = 18,
               .gids = GidChoice{.local_index = 3, .remote_index = 1, .remote_gid = {},
                                 .global = true, .reason = ""}};
  p.gids.remote_gid[15] = 7;
  QpTransition rtr = RtrAttributes(QpAddress{.qpn = 0x1234, .psn = 0x1abcdef, .lid = 5}, p);
  EXPECT_EQ(rtr.attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(rtr.attr.dest_qp_num, 0x1234u);
  EXPECT_EQ(rtr.attr.rq_psn, 0xabcdefu);  // 24 bits
  EXPECT_EQ(rtr.attr.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(rtr.attr.min_rnr_timer, 12);
  EXPECT_EQ(rtr.attr.ah_attr.is_global, 1);
  EXPECT_EQ(rtr.attr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(rtr.attr.ah_attr.grh.dgid.raw[15], 7);
  EXPECT_EQ(rtr.attr.ah_attr.grh.hop_limit, 0xff);
  EXPECT_TRUE(rtr.mask & IBV_QP_DEST_QPN);
  QpTransition rts = RtsAttributes(QpAddress{.qpn = 9, .psn = 42, .lid = 0}, p);
  EXPECT_EQ(rts.attr.sq_psn, 42u);
  EXPECT_EQ(rts.attr.timeout, 18);
  EXPECT_EQ(rts.attr.retry_cnt, 7);
  EXPECT_EQ(rts.attr.rnr_retry, 7);
  EXPECT_TRUE(rts.mask & IBV_QP_SQ_PSN);
}

SweepOptions Bw(std::vector<uint64_t> sizes, uint32_t qps, bool bidi, bool verify) {
  SweepOptions o;
  o.sizes_bytes = std::move(sizes);
  o.iterations = 4;
  o.qps = qps;
  o.tx_depth = 2;
  o.cq_moderation = 1;
  o.bidirectional = bidi;
  o.verify = verify;
  o.seed = 11;
  return o;
}

struct Pair {
  FakeSessionFactory factory;
  std::unique_ptr<TargetSession> target;
  std::unique_ptr<InitiatorSession> initiator;
};

// The exchange the agents and the controller perform, in one process.
std::unique_ptr<Pair> Connect(const SweepOptions& o) {
  auto p = std::make_unique<Pair>();
  EXPECT_TRUE(Validate(o).ok()) << Validate(o);
  TargetSpec ts{.device = FakeRoceDevice("fake1", 2), .bind_address = "", .memory = {},
                .options = o, .slice_bytes = TargetSliceBytes(PlanLayout(o), 0),
                .cm = CmMode::kOob};
  auto t = p->factory.OpenTarget(ts);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return nullptr;
  p->target = std::move(*t);
  const TargetOpened& op = p->target->opened();
  EXPECT_EQ(op.cm, CmMode::kOob);
  EXPECT_EQ(op.oob.qps.size(), o.qps);
  InitiatorSpec is{.device = FakeRoceDevice("fake0", 1), .bind_address = "", .memory = {},
                   .options = o, .cm = CmMode::kOob, .remote = op.slices, .target_address = "",
                   .target_port = 0, .target = op.oob, .timeout_ms = 1000};
  auto in = p->factory.OpenInitiator(is);
  EXPECT_TRUE(in.ok()) << in.status();
  if (!in.ok()) return nullptr;
  p->initiator = std::move(*in);
  std::optional<OobPeer> me = p->initiator->connect_info();
  EXPECT_TRUE(me.has_value());
  EXPECT_EQ(me->target_gid_index, 1u);  // the IPv4 RoCE v2 GIDs, agreed
  absl::Status st = p->target->Connect(*me);
  EXPECT_TRUE(st.ok()) << st;
  std::atomic<bool> stop{false};
  st = p->target->Accept(stop, 1000);
  EXPECT_TRUE(st.ok()) << st;
  st = p->initiator->WaitReady(stop, 1000);
  EXPECT_TRUE(st.ok()) << st;
  return p;
}

TEST(OobSession, ConnectsOverTheFakeFabricAndTheSweepLandsVerified) {
  SweepOptions o = Bw({64, 4096, 65536}, 2, false, true);
  auto p = Connect(o);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->initiator->path().gid_index, 1);
  EXPECT_EQ(p->initiator->path().path_mtu_bytes, 4096u);
  EXPECT_THAT(p->initiator->gid_choice(), HasSubstr("10.0.0.1"));
  std::atomic<bool> cancelled{false};
  std::vector<SizeOutcome> out;
  size_t ran = p->initiator->RunSweep(SweepIdentity{"fake0", 1, ""}, cancelled,
                                      [&](const SizeOutcome& s) { out.push_back(s); });
  ASSERT_EQ(ran, 3u);
  for (const SizeOutcome& s : out) EXPECT_TRUE(s.ok) << s.error;
  BufferLayout l = PlanLayout(o);
  for (const ReverseCheck& c : CheckRegions(p->target->buffer(), o.sizes_bytes, l.verify_offsets,
                                            p->target->slice_bytes(), o.qps,
                                            TestSeed(o.seed, p->target->opened().slices))) {
    EXPECT_TRUE(c.verified) << c.size_bytes << ": " << c.error;
  }
}

TEST(OobSession, BidirectionalRunsTheReverseSweepVerifiedAndSignalsTheEnd) {
  SweepOptions o = Bw({2, 4096}, 1, true, true);
  auto p = Connect(o);
  ASSERT_NE(p, nullptr);
  std::atomic<bool> stop{false};
  std::vector<SizeOutcome> reverse;
  std::thread target([&] { p->target->Run(stop, [&](const SizeOutcome& s) { reverse.push_back(s); }); });
  std::vector<SizeOutcome> fwd;
  p->initiator->RunSweep(SweepIdentity{}, stop, [&](const SizeOutcome& s) { fwd.push_back(s); });
  absl::Status st = p->initiator->WaitReverseDone(stop, 5000);
  target.join();
  EXPECT_TRUE(st.ok()) << st;
  ASSERT_EQ(fwd.size(), 2u);
  ASSERT_EQ(reverse.size(), 2u);
  for (const SizeOutcome& s : reverse) EXPECT_TRUE(s.ok && s.pattern_written) << s.error;
  for (const ReverseCheck& c : p->initiator->CheckReverse()) {
    EXPECT_TRUE(c.verified) << c.size_bytes << ": " << c.error;
  }
}

TEST(OobSession, WriteLatencyPingPongReportsPerftestsStatistics) {
  SweepOptions o;
  o.test = TestKind::kWriteLat;
  o.sizes_bytes = {2, 64, 4096};
  o.iterations = 50;
  o.tx_depth = 1;
  o.cq_moderation = 1;
  o.inline_size = 220;
  auto p = Connect(o);
  ASSERT_NE(p, nullptr);
  std::atomic<bool> stop{false};
  std::vector<SizeOutcome> pong;
  std::thread target([&] { p->target->Run(stop, [&](const SizeOutcome& s) { pong.push_back(s); }); });
  std::vector<SizeOutcome> ping;
  p->initiator->RunLatency(SweepIdentity{"fake0", 1, ""}, stop,
                           [&](const SizeOutcome& s) { ping.push_back(s); });
  stop = true;
  target.join();
  ASSERT_EQ(ping.size(), 3u);
  ASSERT_EQ(pong.size(), 3u);
  for (const SizeOutcome& s : ping) {
    EXPECT_TRUE(s.ok) << s.error;
    EXPECT_TRUE(s.latency_test);
    EXPECT_EQ(s.iterations, 50u);
    EXPECT_EQ(s.latency.samples, 50u - 1 - 2);
    EXPECT_GT(s.latency.t_typical_us, 0);
    EXPECT_LE(s.latency.t_min_us, s.latency.t_typical_us);
    EXPECT_LE(s.latency.t_typical_us, s.latency.t_max_us);
    EXPECT_THAT(s.perftest_command, HasSubstr("ib_write_lat -d fake0 -x 1"));
  }
  for (const SizeOutcome& s : pong) EXPECT_TRUE(s.ok) << s.error;
}

TEST(OobSession, ATargetNeverConnectedTimesOutAndAStoppedOneAborts) {
  FakeSessionFactory f;
  SweepOptions o = Bw({4096}, 1, false, false);
  TargetSpec ts{.device = FakeRoceDevice("fake1", 2), .bind_address = "", .memory = {},
                .options = o, .slice_bytes = 4096, .cm = CmMode::kOob};
  auto t = f.OpenTarget(ts);
  ASSERT_TRUE(t.ok()) << t.status();
  std::atomic<bool> stop{false};
  absl::Status st = (*t)->Accept(stop, 150);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  stop = true;
  st = (*t)->Accept(stop, 10'000);
  EXPECT_EQ(st.code(), absl::StatusCode::kAborted) << st;
}

TEST(OobSession, TheTargetRefusesAGidIndexItDoesNotHave) {
  SweepOptions o = Bw({4096}, 1, false, false);
  FakeSessionFactory f;
  TargetSpec ts{.device = FakeRoceDevice("fake1", 2), .bind_address = "", .memory = {},
                .options = o, .slice_bytes = 4096, .cm = CmMode::kOob};
  auto t = f.OpenTarget(ts);
  ASSERT_TRUE(t.ok());
  InitiatorSpec is{.device = FakeRoceDevice("fake0", 1), .bind_address = "", .memory = {},
                   .options = o, .cm = CmMode::kOob, .remote = (*t)->opened().slices,
                   .target_address = "", .target_port = 0, .target = (*t)->opened().oob,
                   .timeout_ms = 1000};
  auto in = f.OpenInitiator(is);
  ASSERT_TRUE(in.ok()) << in.status();
  OobPeer me = *(*in)->connect_info();
  me.target_gid_index = 9;
  absl::Status st = (*t)->Connect(me);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("GID index 9"));
}

}  // namespace
}  // namespace gdrbench::agent::bench
