// ConnectionCache's bound and order: the least recently used idle
// connection is closed for room, one in use never is, and a sweep over more
// agents than the bound (the real runner and pair tester, the fake cluster
// behind a cache of counted connections) never holds more than the bound.
#include "controller/client/connection_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/client/agent_channels.h"
#include "controller/run/pair_tester.h"
#include "controller/run/plan.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"

namespace gdrbench::controller {
namespace {

using ::testing::ElementsAre;

// A connection that counts itself: how many exist now and at most.
struct Counted {
  Counted(std::string k, std::atomic<int>* live, std::atomic<int>* most) : key(std::move(k)), live(live) {
    const int now = ++*live;
    int seen = most->load();
    while (now > seen && !most->compare_exchange_weak(seen, now)) {
    }
  }
  ~Counted() { --*live; }
  std::string key;
  std::atomic<int>* live;
};

struct CountedCache {
  explicit CountedCache(size_t capacity)
      : cache(capacity, [this](const std::string& key) -> absl::StatusOr<std::unique_ptr<Counted>> {
          if (key == "bad") return absl::InvalidArgumentError("agent address 'bad' is not HOST:PORT");
          opened_keys.push_back(key);  // under the cache's lock
          return std::make_unique<Counted>(key, &live, &most);
        }) {}
  std::atomic<int> live{0}, most{0};
  std::vector<std::string> opened_keys;
  ConnectionCache<Counted> cache;
};

TEST(ConnectionCache, ClosesTheLeastRecentlyUsedIdleConnectionForRoom) {
  CountedCache c(2);
  {
    auto a = c.cache.Acquire("a");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ((*a)->key, "a");
  }
  {
    auto b = c.cache.Acquire("b");
    ASSERT_TRUE(b.ok());
  }
  {
    auto a = c.cache.Acquire("a");
    ASSERT_TRUE(a.ok());
  }  // a is now the most recent
  {
    auto x = c.cache.Acquire("x");
    ASSERT_TRUE(x.ok());
  }  // closes b, not a
  {
    auto a = c.cache.Acquire("a");
    ASSERT_TRUE(a.ok());
  }  // still open: not reopened
  EXPECT_THAT(c.opened_keys, ElementsAre("a", "b", "x"));
  EXPECT_EQ(c.live.load(), 2);
  const auto s = c.cache.stats();
  EXPECT_EQ(s.open, 2u);
  EXPECT_EQ(s.most_open, 2u);
  EXPECT_EQ(s.opened, 3u);
  EXPECT_EQ(s.closed, 1u);
}

TEST(ConnectionCache, NeverClosesAConnectionInUseAndShrinksBackWhenItIsReturned) {
  CountedCache c(2);
  auto a = c.cache.Acquire("a");
  auto b = c.cache.Acquire("b");
  ASSERT_TRUE(a.ok() && b.ok());
  Counted* a_conn = &**a;
  {
    // Both in use: a third is opened rather than waited for (its caller may
    // hold one already), and closed as soon as it is handed back.
    auto x = c.cache.Acquire("x");
    ASSERT_TRUE(x.ok());
    EXPECT_EQ(c.live.load(), 3);
  }
  EXPECT_EQ(c.live.load(), 2);
  EXPECT_EQ(a_conn->key, "a");  // untouched while leased
  // A second lease of a connection in use shares it.
  auto a2 = c.cache.Acquire("a");
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(&**a2, a_conn);
  EXPECT_THAT(c.opened_keys, ElementsAre("a", "b", "x"));
}

// Rounds visit every peer, in the same order, with more peers than room,
// each peer for a few calls in a row (a pair's tests on its rails): least
// recently used would close each just before the next round needs it (an
// opening per peer and round); the cache keeps a stable set open.
TEST(ConnectionCache, RoundsOverMorePeersThanRoomKeepAStableSetOpen) {
  CountedCache c(4);
  const std::vector<std::string> peers = {"a", "b", "c", "d", "e", "f"};
  for (int round = 0; round < 5; ++round) {
    for (const auto& p : peers) {
      for (int call = 0; call < 3; ++call) {
        auto l = c.cache.Acquire(p);
        ASSERT_TRUE(l.ok());
      }
    }
  }
  const auto s = c.cache.stats();
  EXPECT_LE(s.most_open, 4u);
  // 6 the first round, then 4 a round: the 2 that stay open are the stable
  // set (4 less the peers used within the last 4 calls).
  EXPECT_EQ(s.opened, 6u + 4 * 4) << "least recently used opens 30";
}

TEST(ConnectionCache, AFactoryErrorIsAcquiresAndLeavesNothingOpen) {
  CountedCache c(1);
  auto bad = c.cache.Acquire("bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.cache.stats().open, 0u);
  auto a = c.cache.Acquire("a");
  ASSERT_TRUE(a.ok());  // then the next works
}

TEST(ConnectionCache, AMovedLeaseIsReturnedOnce) {
  CountedCache c(1);
  {
    auto a = c.cache.Acquire("a");
    ASSERT_TRUE(a.ok());
    ConnectionCache<Counted>::Lease moved = std::move(*a);
    ConnectionCache<Counted>::Lease again = std::move(moved);
  }
  {
    auto b = c.cache.Acquire("b");
    ASSERT_TRUE(b.ok());
  }  // a was idle: closed for b
  EXPECT_EQ(c.live.load(), 1);
  EXPECT_EQ(c.cache.stats().closed, 1u);
}

// An agent of the fake cluster reached through the cache, one lease per
// call as AgentClient takes them: its stream holds its lease throughout.
class CachedAgent final : public run::AgentApi {
 public:
  CachedAgent(std::string key, CountedCache& cache, run::AgentApi& agent)
      : key_(std::move(key)), cache_(cache), agent_(agent) {}
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.GetNodeInfo();
  }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& r) override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.RunPreflight(r);
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* out) override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.OpenTarget(r, out);
  }
  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.RunWriteSweep(r, timeout, on_message);
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.VerifyTarget(r);
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    auto l = Lease();
    if (!l.ok()) return l.status();
    return agent_.CloseTarget(id);
  }

 private:
  absl::StatusOr<ConnectionCache<Counted>::Lease> Lease() { return cache_.cache.Acquire(key_); }
  std::string key_;
  CountedCache& cache_;
  run::AgentApi& agent_;
};

TEST(ConnectionCache, ASweepOverMoreAgentsThanTheBoundNeverHoldsMore) {
  constexpr uint32_t kNodes = 40, kRails = 4, kParallel = 4;
  run::FakeCluster cluster(kNodes, kRails, 200);
  CountedCache c(ChannelBound(kParallel));
  ASSERT_LT(ChannelBound(kParallel), kNodes);
  std::vector<std::unique_ptr<CachedAgent>> owned;
  std::vector<run::AgentApi*> agents;
  inventory::Inventory inv;
  for (uint32_t i = 0; i < kNodes; ++i) {
    const std::string name = "node" + std::to_string(i);
    inv.nodes.push_back({name, "fake" + std::to_string(i) + ":1", {}, 0, 0});
    owned.push_back(std::make_unique<CachedAgent>(inv.nodes.back().address, c, *cluster.agent(i)));
    agents.push_back(owned.back().get());
  }
  run::ProbeOptions po;
  po.parallelism = kParallel;
  run::ProbeResult probe = run::ProbeNodes(inv, agents, po);
  EXPECT_LE(c.most.load(), static_cast<int>(ChannelBound(kParallel))) << "the preflight fan-out";
  const uint64_t opened_by_probe = c.cache.stats().opened;
  // About once per agent, its GetNodeInfo and RunPreflight on one channel
  // (one left idle between the two may be closed for another thread's),
  // not once per call.
  EXPECT_GE(opened_by_probe, kNodes);
  EXPECT_LT(opened_by_probe, 2 * kNodes);

  v1::SweepParams params;
  params.add_sizes_bytes(65536);
  params.set_iterations(100);
  schedule::ScheduleOptions so;  // all-pairs: 39 x 2 one-way rounds of 20 pairs x 4 rails
  auto plan = run::MakePlan(probe.nodes, "host", so, params);
  ASSERT_TRUE(plan.ok()) << plan.status();
  run::AgentPairTester tester(agents, {});
  run::RunnerOptions ro;
  ro.parallelism = kParallel;
  std::atomic<uint64_t> ok{0}, tests{0};
  ro.on_result_concurrent = [&](const v1::PairResult& r, const schedule::Test&) {
    ++tests;
    if (r.status() == v1::RESULT_STATUS_OK) ++ok;
    return absl::OkStatus();
  };
  ASSERT_TRUE(run::SweepRunner(*plan, tester, ro).Run().ok());
  ASSERT_EQ(tests.load(), plan->schedule.tests());
  EXPECT_EQ(ok.load(), tests.load());
  EXPECT_EQ(cluster.open_targets(), 0);
  EXPECT_LE(c.most.load(), static_cast<int>(ChannelBound(kParallel))) << "the sweep";
  const auto s = c.cache.stats();
  EXPECT_EQ(s.most_open, static_cast<size_t>(c.most.load()));
  // Not a connection per call, nor per test: an agent's channel stays open
  // across its tests of a round (its pair's rails, run one after the other),
  // so about one opening per agent and round, and a cache's worth more
  // where rounds meet. Reopened for each test would be 2 x tests.
  const uint64_t rounds = plan->schedule.rounds();
  EXPECT_LE(s.opened - opened_by_probe, kNodes * rounds + rounds * ChannelBound(kParallel))
      << "reopened within rounds (" << tests.load() << " tests in " << rounds << " rounds)";
  EXPECT_GT(s.closed, 0u);  // the bound was felt: more agents than channels
}

}  // namespace
}  // namespace gdrbench::controller
