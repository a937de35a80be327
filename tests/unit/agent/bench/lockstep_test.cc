// Bidirectional tests in lock-step (write_sweep.h RunSweep, control.h
// MeetPeer) and a peer that dies while the other side waits (PeerProbe), on
// linked fake NICs (fake_nic.h) driven from two threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "agent/bench/control.h"
#include "agent/bench/write_sweep.h"
#include "tests/unit/agent/bench/fake_nic.h"

namespace gdrbench::agent::bench {
namespace {

using ::testing::HasSubstr;
using testing::FakeNic;

// One order of events shared by both directions' threads.
struct Timeline {
  std::mutex mu;
  uint64_t seq = 0;
  // (direction, size index) -> sequence number of the first post / the last
  // poll that returned completions of that size's measured pass.
  std::map<std::pair<int, size_t>, uint64_t> start, end;
  uint64_t Next() { return ++seq; }
};

// A fake NIC whose completions take real time (`poll_us` per poll that
// reaps some), and that logs when each size's pass starts and ends. Without
// warm-up and verify, every Configure() is the next size's measured pass.
struct TracedNic {
  FakeNic& nic;
  Timeline& tl;
  int dir;
  int poll_us;
  size_t size = 0;
  bool configured = false;
  bool posted = false;

  void Configure(const std::vector<QpTarget>& t, uint32_t bytes, uint32_t pl) {
    if (configured) ++size;
    configured = true;
    posted = false;
    nic.Configure(t, bytes, pl);
  }
  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    if (!posted) {
      std::lock_guard lock(tl.mu);
      tl.start[{dir, size}] = tl.Next();
      posted = true;
    }
    return nic.Post(qp, first, count, signal, wr_id);
  }
  int Poll(int max, ibv_wc* wc) {
    int n = nic.Poll(max, wc);
    bool loop_wrs = false;
    for (int i = 0; i < n; ++i) loop_wrs = loop_wrs || (wc[i].wr_id & kControlWrIdBit) == 0;
    if (loop_wrs) {
      std::this_thread::sleep_for(std::chrono::microseconds(poll_us));
      std::lock_guard lock(tl.mu);
      tl.end[{dir, size}] = tl.Next();
    }
    return n;
  }
  int64_t NowNs() { return nic.NowNs(); }
  int PostControl(uint32_t qp, uint32_t imm) { return nic.PostControl(qp, imm); }
  int PostControlReceive(uint32_t qp) { return nic.PostControlReceive(qp); }
  int PollControl(int max, ibv_wc* wc) { return nic.PollControl(max, wc); }
  int PostKeepalive(uint32_t qp) { return nic.PostKeepalive(qp); }
  uint32_t qps() const { return nic.qps(); }
  void Idle() { nic.Idle(); }
};

SweepOptions Bidirectional(std::vector<uint64_t> sizes) {
  SweepOptions o;
  o.sizes_bytes = std::move(sizes);
  o.iterations = 400;
  o.qps = 1;
  o.tx_depth = 4;
  o.cq_moderation = 1;
  o.bidirectional = true;
  EXPECT_TRUE(Validate(o).ok()) << Validate(o);
  return o;
}

SweepEndpoint Endpoint() {
  SweepEndpoint ep;
  ep.slices = {QpTarget{}};
  return ep;
}

// One direction five times slower than the other (a shaped link): the fast
// direction never runs ahead. Each size's measured passes overlap, and
// neither direction starts size i+1 before the other finished size i, so
// the slow direction is measured under the fast one's load to the last
// size (without the barriers the fast one ends its whole sweep during the
// slow one's first size and the rest of the slow sweep runs alone).
TEST(LockStep, TheSlowDirectionIsMeasuredUnderLoadToTheLastSize) {
  const std::vector<uint64_t> sizes = {4096, 8192, 16384, 32768};
  SweepOptions o = Bidirectional(sizes);
  FakeNic fast_nic(1, 8, 100), slow_nic(1, 8, 500);
  FakeNic::Link(fast_nic, slow_nic);
  fast_nic.real_time_idle = slow_nic.real_time_idle = true;
  ASSERT_TRUE(ArmControlReceives(fast_nic).ok());
  ASSERT_TRUE(ArmControlReceives(slow_nic).ok());
  Timeline tl;
  TracedNic fast{fast_nic, tl, 0, 100}, slow{slow_nic, tl, 1, 400};
  std::atomic<bool> cancelled{false};
  std::vector<SizeOutcome> fast_out, slow_out;
  std::thread t([&] {
    RunSweep(slow, o, Endpoint(), SweepIdentity{}, cancelled,
             [&](const SizeOutcome& s) { slow_out.push_back(s); });
  });
  RunSweep(fast, o, Endpoint(), SweepIdentity{}, cancelled,
           [&](const SizeOutcome& s) { fast_out.push_back(s); });
  t.join();
  ASSERT_EQ(fast_out.size(), sizes.size());
  ASSERT_EQ(slow_out.size(), sizes.size());
  auto start = [&](int dir, size_t i) { return tl.start[std::make_pair(dir, i)]; };
  auto end = [&](int dir, size_t i) { return tl.end[std::make_pair(dir, i)]; };
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_TRUE(fast_out[i].ok && fast_out[i].lockstep) << fast_out[i].error;
    EXPECT_TRUE(slow_out[i].ok && slow_out[i].lockstep) << slow_out[i].error;
    // The two passes of size i overlap.
    EXPECT_LT(start(1, i), end(0, i)) << "size " << i << ": the slow pass ran alone";
    EXPECT_LT(start(0, i), end(1, i)) << "size " << i;
    if (i + 1 < sizes.size()) {
      EXPECT_GT(start(0, i + 1), end(1, i)) << "the fast direction ran ahead at " << i;
      EXPECT_GT(start(1, i + 1), end(0, i)) << i;
    }
  }
}

// A peer that dies while this side waits for it (the initiator waiting for
// "reverse sweep done" or at a barrier, with nothing of its own in flight)
// is heard through the keep-alive in seconds, not at the wait's 600 s.
TEST(LockStep, APeerThatDiesDuringTheWaitIsHeardWithinSeconds) {
  FakeNic initiator(1, 8, 100), target(1, 8, 100);
  FakeNic::Link(initiator, target);
  ASSERT_TRUE(ArmControlReceives(initiator).ok());
  ASSERT_TRUE(ArmControlReceives(target).ok());
  initiator.Configure({QpTarget{}}, 4096, 1);
  std::atomic<bool> cancelled{false};
  // Alive: the probes are answered and the wait ends on the message.
  const int64_t t0 = initiator.now();
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(SendControl(target, 0, ControlMessage::kReverseDone, 1'000'000'000).ok());
  });
  initiator.real_time_idle = true;
  absl::Status st = WaitControl(initiator, ControlMessage::kReverseDone, {0}, cancelled,
                                600'000'000'000);
  peer.join();
  EXPECT_TRUE(st.ok()) << st;
  initiator.real_time_idle = false;
  // Dead: its process is gone, nothing ACKs.
  target.dead = true;
  const int64_t t1 = initiator.now();
  st = WaitControl(initiator, ControlMessage::kReverseDone, {0}, cancelled, 600'000'000'000);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("the peer stopped answering"));
  EXPECT_LT(initiator.now() - t1, 5'000'000'000);
  EXPECT_GT(initiator.keepalives, 0u);
  (void)t0;
}

// rxe retries a WRITE to a destroyed QP forever at retry count 7 (the lab's
// first kill of a waiting target's agent hung the pair until its 120 s
// timeout): a keep-alive not acknowledged in kKeepaliveAnswerNs is the
// peer's death all the same.
TEST(LockStep, APeerWhoseRetriesNeverEndIsHeardByTheKeepalivesDeadline) {
  FakeNic initiator(1, 8, 100), target(1, 8, 100);
  FakeNic::Link(initiator, target);
  ASSERT_TRUE(ArmControlReceives(initiator).ok());
  initiator.Configure({QpTarget{}}, 4096, 1);
  initiator.retries_forever = true;
  target.dead = true;
  std::atomic<bool> cancelled{false};
  const int64_t t0 = initiator.now();
  absl::Status st = WaitControl(initiator, ControlMessage::kReverseDone, {0}, cancelled, 600'000'000'000);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("the peer stopped answering: the keep-alive WRITE on QP 0 was "
                                                   "not acknowledged within 12 s"));
  EXPECT_LT(initiator.now() - t0, kKeepaliveAnswerNs + 2'000'000'000);
  EXPECT_GE(initiator.now() - t0, kKeepaliveAnswerNs);
}

// A barrier whose peer died fails the size with the reason, in seconds.
TEST(LockStep, ABarrierWithADeadPeerFailsTheSize) {
  SweepOptions o = Bidirectional({4096, 8192});
  FakeNic a(1, 8, 100), b(1, 8, 100);
  FakeNic::Link(a, b);
  ASSERT_TRUE(ArmControlReceives(a).ok());
  b.dead = true;
  std::atomic<bool> cancelled{false};
  std::vector<SizeOutcome> out;
  const int64_t t0 = a.now();
  RunSweep(a, o, Endpoint(), SweepIdentity{}, cancelled,
           [&](const SizeOutcome& s) { out.push_back(s); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].ok);
  EXPECT_THAT(out[0].error, HasSubstr("bidirectional start barrier at 4096 B"));
  EXPECT_LT(a.now() - t0, 5'000'000'000);
}

}  // namespace
}  // namespace gdrbench::agent::bench
