// PrepareAhead sets tests up ahead of the workers that run them, bounded by a
// window of each round, not by the round: at 1,024 x 8 a quick round is 4,096
// tests, and setting up a whole round ahead held 4,096 targets open across a
// fleet for a round's length (issue 30). Checked with a tester that counts
// what it holds: a set-up made and not yet taken or discarded.
#include "controller/run/prepare_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gdrbench::controller::run {
namespace {

// Holds one count of its tester while it lives.
class Counted : public PreparedTest {
 public:
  Counted(std::atomic<int>* held, std::string name) : held_(held), name(std::move(name)) { ++*held_; }
  ~Counted() override { --*held_; }
  std::atomic<int>* held_;
  const std::string name;
};

class CountingTester : public PairTester {
 public:
  void Run(const PairTestSpec&, v1::PairResult*) override {}
  std::unique_ptr<PreparedTest> Prepare(const PairTestSpec& spec) override {
    auto made = std::make_unique<Counted>(&held, Name(spec));
    int now = held.load();
    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(made->name);
    }
    ++prepared;
    return made;
  }
  void Discard(const PairTestSpec&, std::unique_ptr<PreparedTest> p) override {
    ++discarded;
    p.reset();
  }
  // "round/src": the round and the test's source node.
  static std::string Name(const PairTestSpec& spec) {
    return std::to_string(spec.round) + "/" + std::to_string(spec.test.src);
  }
  std::vector<std::string> Order() {
    std::lock_guard<std::mutex> lock(mu);
    return order;
  }

  std::atomic<int> held{0}, most{0}, prepared{0}, discarded{0};
  std::mutex mu;
  std::vector<std::string> order;
};

std::vector<PairTestSpec> Specs(uint32_t round, uint32_t n) {
  std::vector<PairTestSpec> specs(n);
  for (uint32_t i = 0; i < n; ++i) {
    specs[i].round = round;
    specs[i].test.src = i;
    specs[i].test.dst = i + n;
  }
  return specs;
}

// Waits (up to 10 s) until `count` is `n`: the threads set up and discard
// on their own time.
bool WaitFor(const std::atomic<int>& count, int n) {
  for (int i = 0; i < 10000 && count.load() != n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return count.load() == n;
}
bool WaitPrepared(const CountingTester& tester, int n) { return WaitFor(tester.prepared, n); }

TEST(PrepareAhead, SetsUpAWindowOfARoundAheadNotTheWholeRound) {
  CountingTester tester;
  PrepareAhead ahead(tester, 4, 4, nullptr);
  auto round = ahead.Start(Specs(1, 200));
  ASSERT_TRUE(WaitPrepared(tester, 4));
  // Nothing taken: the window is full, and stays so (four idle threads, 196
  // tests left).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(tester.prepared.load(), 4);
  // The workers take the round in order; each take lets one more start.
  size_t had = 0;
  for (size_t k = 0; k < round->size(); ++k) {
    std::unique_ptr<PreparedTest> p = ahead.Take(*round, k);
    had += p != nullptr;
    EXPECT_LE(tester.held.load(), 4 + static_cast<int>(p != nullptr)) << "at test " << k;
  }
  ahead.Release(*round);
  EXPECT_EQ(ahead.most_ahead(), 4u);
  EXPECT_LE(tester.most.load(), 5);  // the window and the test the worker holds
  EXPECT_GE(had, 4u);
  EXPECT_EQ(tester.held.load(), 0);
}

TEST(PrepareAhead, TheRoundRunningComesFirstThenTheNextRoundsHead) {
  CountingTester tester;
  PrepareAhead ahead(tester, 1, 2, nullptr);
  auto current = ahead.Start(Specs(1, 10));
  auto next = ahead.Start(Specs(2, 10));
  ASSERT_TRUE(WaitPrepared(tester, 4));  // two of each
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(tester.prepared.load(), 4);
  EXPECT_EQ(tester.held.load(), 4);
  auto first = ahead.Take(*current, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(static_cast<Counted&>(*first).name, "1/0");
  ASSERT_TRUE(WaitPrepared(tester, 5));
  EXPECT_EQ(tester.Order().back(), "1/2");  // this round's window moved: its next test, not round 2's
  // The round ends with tests never taken (a cancel): what they had is
  // discarded; the next round's head stays for it.
  ahead.Release(*current);
  EXPECT_TRUE(WaitFor(tester.discarded, 2));  // 1/1 and 1/2
  first.reset();
  EXPECT_TRUE(WaitFor(tester.held, 2));
  auto second_round_first = ahead.Take(*next, 0);
  ASSERT_NE(second_round_first, nullptr);
  EXPECT_EQ(static_cast<Counted&>(*second_round_first).name, "2/0");
}

// A round left unreleased (a run ended by an error) is discarded with the
// PrepareAhead: nothing set up ahead outlives it.
TEST(PrepareAhead, NothingSetUpOutlivesIt) {
  CountingTester tester;
  {
    PrepareAhead ahead(tester, 3, 8, nullptr);
    auto a = ahead.Start(Specs(1, 20));
    auto b = ahead.Start(Specs(2, 20));
    ASSERT_TRUE(WaitPrepared(tester, 16));
    EXPECT_EQ(ahead.most_ahead(), 16u);
  }
  EXPECT_EQ(tester.discarded.load(), 16);
  EXPECT_EQ(tester.held.load(), 0);
}

}  // namespace
}  // namespace gdrbench::controller::run
