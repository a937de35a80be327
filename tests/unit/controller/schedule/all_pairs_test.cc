// The all-pairs schedule made round by round (all_pairs.h) against the
// definition of the round-robin 1-factorization (the circle method) and
// against the whole-schedule layout it replaced: for every matching of
// RoundRobin(n), for each rail group, the pairs' tests a->b, then b->a (one
// direction per sub-round), cut by the cap.
#include "controller/schedule/all_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/schedule/factorization.h"
#include "controller/schedule/schedule.h"
#include "tests/unit/controller/schedule/nodes.h"

namespace gdrbench::controller::schedule {
namespace {

using Pair = std::pair<uint32_t, uint32_t>;

// The circle method for K_n: with m = n rounded up to even, node m-1 stays
// fixed and nodes 0..m-2 sit on a ring; round r (0 <= r < m-1) pairs r with
// m-1 and every other a != b with a + b = 2r (mod m-1). For odd n node m-1
// does not exist: r sits round r out.
void CheckCircleMethod(uint32_t n) {
  const uint32_t m = n % 2 == 0 ? n : n + 1;
  const uint32_t rounds = n < 2 ? 0 : m - 1;
  ASSERT_EQ(RoundRobinRounds(n), rounds) << "n=" << n;
  const Factorization whole = RoundRobin(n);
  ASSERT_EQ(whole.rounds, rounds);
  std::vector<uint32_t> met(size_t{n} * n, 0);
  std::vector<uint32_t> rests(n, 0);
  std::vector<Pair> pairs;
  for (uint32_t r = 0; r < rounds; ++r) {
    RoundRobinRound(n, r, &pairs);
    ASSERT_EQ(pairs.size(), n / 2) << "n=" << n << " round " << r;
    std::vector<uint8_t> busy(n, 0);
    for (size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      ASSERT_LT(a, n);
      ASSERT_LT(b, n);
      ASSERT_NE(a, b);
      ASSERT_EQ(busy[a] + busy[b], 0) << "n=" << n << " round " << r << ": a node twice";
      busy[a] = busy[b] = 1;
      ++met[size_t{std::min(a, b)} * n + std::max(a, b)];
      if (a == m - 1 || b == m - 1) {
        EXPECT_EQ(a + b - (m - 1), r) << "n=" << n << ": the fixed node meets r in round r";
      } else {
        EXPECT_EQ((a + b) % (m - 1), (2 * r) % (m - 1)) << "n=" << n << " round " << r;
      }
      // The same pairs, order and sides as the whole factorization's round.
      ASSERT_EQ(pairs[i], whole.pairs[size_t{r} * whole.pairs_per_round + i]) << "n=" << n << " round " << r;
    }
    if (n % 2 == 1) {
      EXPECT_EQ(busy[r], 0) << "n=" << n << ": node r sits round r out";
      for (uint32_t k = 0; k < n; ++k) rests[k] += busy[k] == 0;
    }
  }
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b) {
      ASSERT_EQ(met[size_t{a} * n + b], 1u) << "n=" << n << ": " << a << "-" << b;
    }
    if (n % 2 == 1 && n > 1) {  // n = 1: no round to rest in
      ASSERT_EQ(rests[a], 1u) << "n=" << n << ": node " << a << " rests once";
    }
  }
}

TEST(RoundRobinRound, IsTheCircleMethodRoundByRoundForEveryNUpTo200AndLarge) {
  for (uint32_t n = 0; n <= 200; ++n) {
    CheckCircleMethod(n);
    if (HasFatalFailure()) return;
  }
  for (uint32_t n : {511u, 512u, 1023u, 1024u, 1025u}) {
    CheckCircleMethod(n);
    if (HasFatalFailure()) return;
  }
}

// The whole-schedule layout, built here from RoundRobin(n)'s whole
// factorization: the rounds BuildSchedule stored before it generated them.
std::vector<std::vector<Test>> WholeLayout(const std::vector<NodeShape>& nodes,
                                           const std::vector<std::vector<uint32_t>>& groups,
                                           bool bidirectional, uint32_t cap) {
  const Factorization f = RoundRobin(static_cast<uint32_t>(nodes.size()));
  std::vector<std::vector<Test>> rounds;
  for (uint32_t r = 0; r < f.rounds; ++r) {
    for (const auto& group : groups) {
      for (bool reversed : {false, true}) {
        if (reversed && bidirectional) continue;
        std::vector<Test> sub;
        for (uint32_t p = 0; p < f.pairs_per_round; ++p) {
          auto [a, b] = f.pairs[size_t{r} * f.pairs_per_round + p];
          if (reversed) std::swap(a, b);
          const size_t shared = std::min(nodes[a].rail_gpu.size(), nodes[b].rail_gpu.size());
          for (uint32_t rail : group) {
            if (rail < shared) sub.push_back(Test{a, b, rail, bidirectional});
          }
        }
        const size_t slice = cap > 0 ? cap : std::max<size_t>(sub.size(), 1);
        for (size_t k = 0; k < sub.size(); k += slice) {
          rounds.emplace_back(sub.begin() + k, sub.begin() + std::min(sub.size(), k + slice));
        }
      }
    }
  }
  return rounds;
}

using Key = std::tuple<uint32_t, uint32_t, uint32_t, bool, uint32_t>;
Key KeyOf(const Test& t) { return {t.src, t.dst, t.rail, t.bidirectional, t.dst_rail}; }

// BuildSchedule's all-pairs schedule (generated) against the whole layout,
// round by round, and the facts of the definition: no node twice in a
// round (per rail: no NIC twice, ValidateSchedule for the GPUs), every pair
// on every rail both have exactly once per direction.
void CheckGenerated(const std::vector<NodeShape>& nodes, const std::vector<std::vector<uint32_t>>& groups,
                    bool bidirectional, uint32_t cap) {
  ScheduleOptions o;
  o.bidirectional = bidirectional;
  o.max_concurrent = cap;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->generated());
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  const std::string what = absl::StrCat("n=", n, " rails of node 0 ", nodes[0].rail_gpu.size(),
                                        bidirectional ? " bidirectional" : " one direction", " cap ", cap);
  const auto whole = WholeLayout(nodes, groups, bidirectional, cap);
  ASSERT_EQ(s->rounds(), whole.size()) << what;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  size_t tests = 0, max_round = 0;
  std::vector<Test> round;
  for (size_t r = 0; r < s->rounds(); ++r) {
    s->RoundInto(r, &round);
    ASSERT_EQ(round.size(), whole[r].size()) << what << " round " << r;
    ASSERT_EQ(s->RoundSize(r), round.size());
    std::set<std::pair<uint32_t, uint32_t>> nics;
    for (size_t i = 0; i < round.size(); ++i) {
      ASSERT_EQ(KeyOf(round[i]), KeyOf(whole[r][i])) << what << " round " << r << " test " << i;
      ASSERT_TRUE(nics.insert({round[i].src, round[i].rail}).second) << what << " round " << r;
      ASSERT_TRUE(nics.insert({round[i].dst, round[i].rail}).second) << what << " round " << r;
      ASSERT_TRUE(seen.insert({round[i].src, round[i].dst, round[i].rail}).second) << what;
      if (bidirectional) {
        ASSERT_TRUE(seen.insert({round[i].dst, round[i].src, round[i].rail}).second) << what;
      }
    }
    if (cap > 0) {
      ASSERT_LE(round.size(), cap);
    }
    tests += round.size();
    max_round = std::max(max_round, round.size());
  }
  size_t expected = 0;  // ordered pairs x the rails both have
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = 0; b < n; ++b) {
      if (a != b) expected += std::min(nodes[a].rail_gpu.size(), nodes[b].rail_gpu.size());
    }
  }
  ASSERT_EQ(seen.size(), expected) << what;
  EXPECT_EQ(s->tests(), tests) << what;
  EXPECT_EQ(s->tests(), bidirectional ? expected / 2 : expected) << what;
  EXPECT_EQ(s->MaxRoundSize(), max_round) << what;
  EXPECT_TRUE(ValidateSchedule(*s, nodes).ok()) << what << ": " << ValidateSchedule(*s, nodes);
  // The whole-schedule view (AllTests) is the rounds in order.
  std::vector<Test> all = s->AllTests();
  ASSERT_EQ(all.size(), tests);
  size_t k = 0;
  for (const auto& w : whole) {
    for (const Test& t : w) ASSERT_EQ(KeyOf(all[k++]), KeyOf(t)) << what;
  }
}

std::vector<std::vector<uint32_t>> OneGroup(uint32_t rails) {
  std::vector<uint32_t> g(rails);
  for (uint32_t r = 0; r < rails; ++r) g[r] = r;
  return {g};
}

TEST(AllPairsRounds, SameTestsRoundByRoundAsTheWholeScheduleForOddAndEvenNRailsAndCaps) {
  for (uint32_t n : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 16u, 17u, 31u, 32u, 33u}) {
    for (uint32_t rails : {1u, 2u, 4u, 8u}) {
      std::vector<int> rg(rails);
      for (uint32_t r = 0; r < rails; ++r) rg[r] = static_cast<int>(r);
      for (bool bidi : {false, true}) {
        for (uint32_t cap : {0u, 1u, 3u, 5u, 64u}) {
          CheckGenerated(Nodes(n, rg), OneGroup(rails), bidi, cap);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(AllPairsRounds, RailsSharingAGpuAndNodesWithFewerRails) {
  // Rails 0 and 1 share GPU 0: groups {0, 2} and {1}.
  for (uint32_t n : {3u, 4u, 7u, 10u}) {
    for (bool bidi : {false, true}) {
      for (uint32_t cap : {0u, 2u, 7u}) {
        CheckGenerated(Nodes(n, {0, 0, 1}), {{0, 2}, {1}}, bidi, cap);
        if (HasFatalFailure()) return;
      }
    }
  }
  // Mixed rail counts (host memory, one group): node k has 1 + k % 4 rails,
  // so a pair runs on the rails both have and some sub-rounds are short.
  for (uint32_t n : {2u, 5u, 8u, 13u}) {
    std::vector<NodeShape> nodes(n);
    for (uint32_t k = 0; k < n; ++k) nodes[k].rail_gpu.assign(1 + k % 4, -1);
    for (bool bidi : {false, true}) {
      for (uint32_t cap : {0u, 1u, 4u}) {
        CheckGenerated(nodes, OneGroup(4), bidi, cap);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(AllPairsRounds, FleetScaleHoldsAnIndexNotTheTests) {
  // 1,024 nodes x 8 rails, one direction per sub-round: 2 x 1,023 rounds of
  // 512 pairs x 8 rails; round 2k is matching k forward, 2k+1 backward.
  std::vector<int> rg = {0, 1, 2, 3, 4, 5, 6, 7};
  auto s = BuildSchedule(Nodes(1024, rg), {});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->generated());
  EXPECT_EQ(s->rounds(), 2u * 1023);
  EXPECT_EQ(s->tests(), 1024u * 1023 * 8);
  EXPECT_EQ(s->MaxRoundSize(), 512u * 8);
  // The estimate counts rounds: nothing is made whole for it.
  EstimateParams p;
  p.sizes_bytes = {1 << 20};
  p.iterations = 100;
  EXPECT_DOUBLE_EQ(EstimateScheduleSeconds(*s, p), 2046 * EstimateTestSeconds(p));
  for (uint32_t k : {0u, 1u, 511u, 1022u}) {
    for (bool back : {false, true}) {
      std::vector<schedule::Test> round = s->Round(2 * k + back);
      ASSERT_EQ(round.size(), 4096u);
      // The circle method's matching k: the fixed node 1023 meets k, every
      // other pair sums to 2k mod 1023; rails 0..7 of a pair in order.
      for (size_t i = 0; i < round.size(); ++i) {
        const schedule::Test& t = round[i];
        EXPECT_EQ(t.rail, i % 8);
        const uint32_t a = back ? t.dst : t.src, b = back ? t.src : t.dst;
        if (i < 8) {
          EXPECT_EQ(std::min(a, b), k);
          EXPECT_EQ(std::max(a, b), 1023u);
        } else {
          EXPECT_EQ((a + b) % 1023, (2 * k) % 1023);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gdrbench::controller::schedule
