// --mode cross-rail: every rail combination of every ordered pair, each end
// on its own rail (split from schedule_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "controller/schedule/schedule.h"
#include "tests/unit/controller/schedule/nodes.h"

namespace gdrbench::controller::schedule {
namespace {

// Cross-rail over n nodes of `rail_gpu` shapes (per node): every ordered
// (src, dst, src rail, dst rail) with src != dst and the two rails different
// and present on their nodes exactly once, no same-rail test, the invariant
// with each end's own rail, and every round one rail shift.
void CheckCrossRail(const std::vector<NodeShape>& nodes, uint32_t cap = 0) {
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  uint32_t rails = 0;
  for (const auto& nd : nodes) rails = std::max(rails, static_cast<uint32_t>(nd.rail_gpu.size()));
  ScheduleOptions o;
  o.mode = Mode::kCrossRail;
  o.max_concurrent = cap;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<uint8_t> seen(size_t{n} * n * rails * rails, 0);
  size_t bad = 0, covered = 0, want = 0;
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const size_t ra = nodes[a].rail_gpu.size(), rb = nodes[b].rail_gpu.size();
      want += ra * rb - std::min(ra, rb);
    }
  }
  for (size_t r = 0; r < s->rounds(); ++r) {
    std::set<uint32_t> shifts;
    for (const schedule::Test& t : s->Round(r)) {
      bad += !t.CrossRail() + (t.src == t.dst) + t.bidirectional;
      shifts.insert((t.TargetRail() + rails - t.rail) % rails);
      uint8_t& c = seen[((size_t{t.src} * n + t.dst) * rails + t.rail) * rails + t.TargetRail()];
      bad += c;
      c = 1;
      ++covered;
    }
    ASSERT_EQ(shifts.size(), 1u) << "round " << r << " mixes rail shifts";
    if (cap) {
      ASSERT_LE(s->Round(r).size(), cap);
    }
  }
  ASSERT_EQ(bad, 0u) << "n=" << n
                     << ": a combination twice, a same-rail test, a self-pair or a bidirectional test";
  ASSERT_EQ(covered, want) << "n=" << n;
  ASSERT_TRUE(ValidateSchedule(*s, nodes).ok()) << ValidateSchedule(*s, nodes);
}

TEST(CrossRail, EveryRailCombinationOfEveryOrderedPairOnceForEveryNAndRails) {
  for (uint32_t rails = 2; rails <= 4; ++rails) {
    std::vector<int> rg(rails);
    for (uint32_t r = 0; r < rails; ++r) rg[r] = static_cast<int>(r);
    for (uint32_t n = 2; n <= 40; ++n) {
      CheckCrossRail(Nodes(n, rg));
      if (HasFatalFailure()) return;
      // Distinct GPUs: a sub-round never splits, so 2 x x the
      // all-pairs rounds, each with one test per node and rail.
      ScheduleOptions o;
      o.mode = Mode::kCrossRail;
      auto s = BuildSchedule(Nodes(n, rg), o);
      ASSERT_EQ(s->rounds(), size_t{2} * (rails - 1) * (n % 2 == 0 ? n - 1 : n)) << n << " x " << rails;
    }
  }
  CheckCrossRail(Nodes(129, {0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(CrossRail, SharedGpusMixedRailCountsAndTheCap) {
  CheckCrossRail(Nodes(6, {0, 0, 1, 1}));  // rails 0/1 and 2/3 share a GPU
  CheckCrossRail(Nodes(7, {0, 0}));
  std::vector<NodeShape> mixed = Nodes(3, {-1, -1});
  for (const auto& nd : Nodes(4, {-1, -1, -1, -1})) mixed.push_back(nd);
  mixed.push_back(NodeShape{{-1}});  // one rail: a target and a sender of other rails only
  CheckCrossRail(mixed);
  CheckCrossRail(Nodes(8, {-1, -1, -1}), /*cap=*/5);
  // Two rails of one GPU: a node's GPU is in one test per round.
  auto nodes = Nodes(4, {0, 0});
  ScheduleOptions o;
  o.mode = Mode::kCrossRail;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rounds(), 2u * 2 * 3);  // each sub-round split in two
}

TEST(CrossRail, FewerThanTwoRailsAndBidirectionalAreOneSentence) {
  ScheduleOptions o;
  o.mode = Mode::kCrossRail;
  auto one = BuildSchedule(Nodes(4), o);
  ASSERT_EQ(one.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(one.status().message(),
            "--mode cross-rail needs nodes with at least 2 rails, and every node here has 1: give the "
            "inventory's nodes their rail NICs (rails:) or use --mode all-pairs");
  o.bidirectional = true;
  EXPECT_THAT(std::string(BuildSchedule(Nodes(4, {0, 1}), o).status().message()),
              testing::HasSubstr("--mode cross-rail is one-directional"));
  EXPECT_EQ(ParseMode("cross-rail").value(), Mode::kCrossRail);
  EXPECT_STREQ(ModeName(Mode::kCrossRail), "cross-rail");
  EXPECT_EQ(MaxFanIn(o), 1u);
  // Counted before it is built: 1024 nodes x 8 rails is 58.7 M tests.
  o.bidirectional = false;
  auto big = BuildSchedule(Nodes(1024, {0, 1, 2, 3, 4, 5, 6, 7}), o);
  EXPECT_THAT(
      std::string(big.status().message()),
      testing::StartsWith(absl::StrCat("the plan has ", 1024u * 1023u * 8u * 7u, " tests (cross-rail")));
}

TEST(Validate, CrossRailChecksEachEndOnItsOwnRail) {
  auto nodes = Nodes(4, {-1, -1});
  auto round = [](std::vector<schedule::Test> tests) {
    Schedule s;
    for (const schedule::Test& t : tests) s.Add(t);
    s.CloseRound();
    return s;
  };
  auto msg = [&](const Schedule& s, const std::vector<NodeShape>& shapes) {
    return std::string(ValidateSchedule(s, shapes).message());
  };
  // Node 0 written to on rail 1 by two senders of rail 0 and rail 1.
  EXPECT_THAT(msg(round({{1, 0, 0, false, 1}, {2, 0, 1, false, 1}}), nodes),
              testing::HasSubstr("round 0: NIC of rail 1 on node 0 is in two tests"));
  // Node 0 sends on rail 0 and is written to on rail 1: two NICs, fine.
  EXPECT_TRUE(ValidateSchedule(round({{1, 0, 0, false, 1}, {0, 2, 0, false, 1}}), nodes).ok());
  // ... but not when it sends on the rail it is written to.
  EXPECT_THAT(msg(round({{1, 0, 0, false, 1}, {0, 2, 1, false, 0}}), nodes),
              testing::HasSubstr("NIC of rail 1 on node 0 is in two tests"));
  // The same two tests with the target's rail read as the sender's would
  // pass: the target's rail is what is checked.
  EXPECT_TRUE(ValidateSchedule(round({{1, 0, 0, false}, {0, 2, 1, false}}), nodes).ok());
  // A target rail the node lacks.
  EXPECT_THAT(msg(round({{1, 0, 0, false, 3}}), nodes), testing::HasSubstr("node 0 has no rail 3"));
  // Two rails of one GPU: node 0's GPU through its rail 0 (sender) and rail 1 (target).
  EXPECT_THAT(msg(round({{1, 0, 0, false, 1}, {0, 2, 0, false, 1}}), Nodes(4, {0, 0})),
              testing::HasSubstr("GPU 0 on node 0 is in two tests"));
}

TEST(PackRounds, KeysTheTargetByItsOwnRail) {
  auto nodes = Nodes(4, {-1, -1});
  std::vector<schedule::Test> clash = {{1, 0, 0, false, 1}, {2, 0, 1, false, 1}};
  auto a = PackRounds(clash, nodes, 0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->rounds(), 2u);  // both write to node 0's rail 1
  std::vector<schedule::Test> apart = {{1, 0, 0, false, 1}, {2, 0, 1, false, 0}};
  auto b = PackRounds(apart, nodes, 0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->rounds(), 1u);
  EXPECT_TRUE(ValidateSchedule(*b, nodes).ok());
  std::vector<schedule::Test> missing = {{1, 0, 0, false, 2}};
  EXPECT_THAT(std::string(PackRounds(missing, nodes, 0).status().message()),
              testing::HasSubstr("test 1->0 rail 0->2: node 0 has no rail 2"));
}

}  // namespace
}  // namespace gdrbench::controller::schedule
