#include "controller/schedule/schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "controller/schedule/factorization.h"
#include "tests/unit/controller/schedule/nodes.h"

namespace gdrbench::controller::schedule {
namespace {


// Checks coverage (every ordered pair exactly once per rail), minimal rounds,
// and the NIC/GPU invariant for one N.
void CheckAllPairs(uint32_t n, bool bidirectional, uint32_t rails) {
  std::vector<int> rg(rails);
  for (uint32_t r = 0; r < rails; ++r) rg[r] = static_cast<int>(r);
  auto nodes = Nodes(n, rg);
  ScheduleOptions o;
  o.bidirectional = bidirectional;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok()) << s.status();
  size_t min_rounds = n % 2 == 0 ? n - 1 : n;
  if (!bidirectional) min_rounds *= 2;
  ASSERT_EQ(s->rounds(), min_rounds) << "N=" << n;
  // Each ordered (src, dst, rail) at most once, never a node with itself, and
  // exactly N(N-1) per rail in total: together that is "exactly once each".
  std::vector<uint8_t> seen(size_t{n} * n * rails, 0);
  size_t covered = 0, bad = 0;
  auto mark = [&](uint32_t a, uint32_t b, uint32_t r) {
    uint8_t& c = seen[(size_t{a} * n + b) * rails + r];
    bad += (c != 0) + (a == b) + (r >= rails);
    c = 1;
    ++covered;
  };
  for (const schedule::Test& t : s->AllTests()) {
    bad += t.bidirectional != bidirectional;
    mark(t.src, t.dst, t.rail);
    if (bidirectional) mark(t.dst, t.src, t.rail);
  }
  ASSERT_EQ(bad, 0u) << "N=" << n << ": a pair twice, a self-pair or a wrong direction flag";
  ASSERT_EQ(covered, size_t{n} * (n - 1) * rails) << "N=" << n;
  ASSERT_TRUE(ValidateSchedule(*s, nodes).ok()) << ValidateSchedule(*s, nodes);
}

TEST(AllPairs, MinimalRoundsFullCoverageNoNicTwicePerRoundForEveryNUpTo1025) {
  for (uint32_t n = 2; n <= 1025; ++n) {
    CheckAllPairs(n, /*bidirectional=*/true, 1);
    if (HasFatalFailure()) return;
  }
}

// One direction per sub-round is the same factorization emitted twice
// (a->b, then b->a); every N up to 256 and the large edge cases keep it fast.
TEST(AllPairs, OneDirectionPerSubRoundDoublesTheRounds) {
  for (uint32_t n = 2; n <= 1025; n = n < 256 ? n + 1 : (n == 256 ? 511 : n + 1)) {
    if (n > 512 && n < 1023) n = 1023;
    CheckAllPairs(n, /*bidirectional=*/false, 1);
    if (HasFatalFailure()) return;
  }
}

TEST(AllPairs, RailsRunInParallel) {
  for (uint32_t n : {2u, 3u, 8u, 17u}) {
    CheckAllPairs(n, false, 4);
    CheckAllPairs(n, true, 8);
  }
}

TEST(AllPairs, RailsSharingAGpuGoToSeparateRounds) {
  auto nodes = Nodes(4, {0, 0, 1});  // rails 0 and 1 share GPU 0
  auto s = BuildSchedule(nodes, {});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(ValidateSchedule(*s, nodes).ok());
  EXPECT_EQ(s->rounds(), 3u * 2 * 2);  // 3 matchings x 2 directions x 2 rail groups
  EXPECT_EQ(s->tests(), 4u * 3 * 3);
}

TEST(AllPairs, CapSplitsRounds) {
  ScheduleOptions o;
  o.max_concurrent = 3;
  auto nodes = Nodes(8, {0, 1});
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok());
  EXPECT_LE(s->MaxRoundSize(), 3u);
  EXPECT_EQ(s->tests(), 8u * 7 * 2);
  EXPECT_TRUE(ValidateSchedule(*s, nodes).ok());
}

TEST(Validate, CatchesANicInTwoTests) {
  auto nodes = Nodes(3);
  Schedule s;
  s.Add({0, 1, 0, false});
  s.Add({2, 1, 0, false});
  s.CloseRound();
  auto st = ValidateSchedule(s, nodes);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), testing::HasSubstr("node 1"));
}

TEST(Validate, CatchesAGpuSharedByTwoRailsInOneRound) {
  auto nodes = Nodes(2, {0, 0});  // both rails move GPU 0's memory
  Schedule s;
  s.Add({0, 1, 0, false});
  s.Add({0, 1, 1, false});  // different NICs, the same GPU on both nodes
  s.CloseRound();
  auto st = ValidateSchedule(s, nodes);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), testing::HasSubstr("GPU 0 on node 0 is in two tests"));
  // With host memory (no GPU per rail) the same round is fine.
  EXPECT_TRUE(ValidateSchedule(s, Nodes(2, {-1, -1})).ok());
}

TEST(PackRounds, KeepsEveryTestOnceAndTheInvariant) {
  auto nodes = Nodes(6, {0, 0, 1});  // rails 0 and 1 share GPU 0
  std::vector<schedule::Test> tests;
  for (uint32_t a = 0; a < 6; ++a) {
    for (uint32_t b = 0; b < 6; ++b) {
      for (uint32_t r = 0; r < 3; ++r) {
        if (a != b && (a + b + r) % 2 == 0) tests.push_back({a, b, r, false});
      }
    }
  }
  auto s = PackRounds(tests, nodes, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(ValidateSchedule(*s, nodes).ok()) << ValidateSchedule(*s, nodes);
  ASSERT_EQ(s->tests(), tests.size());
  std::multiset<std::tuple<uint32_t, uint32_t, uint32_t>> in, out;
  for (const auto& t : tests) in.insert({t.src, t.dst, t.rail});
  for (const auto& t : s->AllTests()) out.insert({t.src, t.dst, t.rail});
  EXPECT_EQ(in, out);
}

TEST(PackRounds, RailsSharingAGpuAreSplitAndDisjointRailsShareARound) {
  std::vector<schedule::Test> tests = {{0, 1, 0, false}, {0, 1, 1, false}, {0, 1, 2, false}};
  auto gpu = PackRounds(tests, Nodes(2, {0, 0, 1}), 0);
  ASSERT_TRUE(gpu.ok());
  ASSERT_EQ(gpu->rounds(), 2u);
  EXPECT_EQ(gpu->Round(0).size(), 2u);  // rails 0 and 2: GPUs 0 and 1
  EXPECT_EQ(gpu->Round(1)[0].rail, 1u);
  auto host = PackRounds(tests, Nodes(2, {-1, -1, -1}), 0);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->rounds(), 1u);
}

TEST(PackRounds, HonoursTheCapAndRejectsImpossibleTests) {
  std::vector<schedule::Test> tests = {{0, 1, 0, false}, {2, 3, 0, false}, {4, 5, 0, false}};
  auto s = PackRounds(tests, Nodes(6), 2);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rounds(), 2u);
  EXPECT_LE(s->MaxRoundSize(), 2u);
  std::vector<schedule::Test> no_rail = {{0, 1, 3, false}};
  EXPECT_EQ(PackRounds(no_rail, Nodes(2), 0).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<schedule::Test> self = {{1, 1, 0, false}};
  EXPECT_EQ(PackRounds(self, Nodes(2), 0).status().code(), absl::StatusCode::kInvalidArgument);
  auto empty = PackRounds({}, Nodes(2), 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->rounds(), 0u);
}

TEST(Quick, SeededMatchingsAreReproducibleAndDisjoint) {
  ScheduleOptions o;
  o.mode = Mode::kQuick;
  o.quick_matchings = 4;
  o.seed = 42;
  o.bidirectional = true;
  auto nodes = Nodes(9);
  auto a = BuildSchedule(nodes, o), b = BuildSchedule(nodes, o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->rounds(), 4u);
  for (size_t r = 0; r < a->rounds(); ++r) {
    EXPECT_EQ(a->Round(r).size(), 4u);
    for (size_t i = 0; i < a->Round(r).size(); ++i) {
      EXPECT_EQ(a->Round(r)[i].src, b->Round(r)[i].src);
    }
  }
  EXPECT_TRUE(ValidateSchedule(*a, nodes).ok());
  o.seed = 43;
  auto c = BuildSchedule(nodes, o);
  bool differs = false;
  for (size_t i = 0; i < c->tests(); ++i) {
    differs |= c->AllTests()[i].src != a->AllTests()[i].src;
  }
  EXPECT_TRUE(differs);
}

TEST(Ring, EachNodeSendsToItsSuccessor) {
  ScheduleOptions o;
  o.mode = Mode::kRing;
  auto nodes = Nodes(5);
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->tests(), 5u);
  EXPECT_EQ(s->rounds(), 3u);  // odd directed cycle: 3 colours
  for (const schedule::Test& t : s->AllTests()) EXPECT_EQ(t.dst, (t.src + 1) % 5);
  EXPECT_TRUE(ValidateSchedule(*s, nodes).ok());
}

TEST(Pairs, ParsesAListAndSchedulesIt) {
  std::vector<std::string> names = {"a", "b", "c"};
  auto p = ParsePairList("# comment\na b\nb -> c\n\nc,a\n", "p.txt", names);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 3u);
  ScheduleOptions o;
  o.mode = Mode::kPairs;
  o.pairs = *p;
  auto s = BuildSchedule(Nodes(3), o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rounds(), 3u);
  EXPECT_TRUE(ValidateSchedule(*s, Nodes(3)).ok());
  auto bad = ParsePairList("a b\na z\n", "p.txt", names);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), testing::HasSubstr("p.txt:2: node 'z'"));
  EXPECT_FALSE(ParsePairList("a a\n", "p.txt", names).ok());
  EXPECT_FALSE(ParsePairList("a b c\n", "p.txt", names).ok());
}

// Incast: per round, each target written by exactly K senders on a rail, no
// sender in two tests, no node both sender and target; over the schedule every
// node is the target of exactly its K successors on every rail.
void CheckIncast(uint32_t n, uint32_t k, uint32_t rails, uint32_t cap = 0) {
  std::vector<int> rg(rails);
  for (uint32_t r = 0; r < rails; ++r) rg[r] = static_cast<int>(r);
  auto nodes = Nodes(n, rg);
  ScheduleOptions o;
  o.mode = Mode::kIncast;
  o.fan_in = k;
  o.max_concurrent = cap;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->tests(), size_t{n} * k * rails) << "N=" << n << " K=" << k;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  for (size_t r = 0; r < s->rounds(); ++r) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> writers;  // (target, rail) -> senders
    std::set<std::pair<uint32_t, uint32_t>> senders;
    std::set<uint32_t> sender_nodes, target_nodes;
    for (const schedule::Test& t : s->Round(r)) {
      ASSERT_FALSE(t.bidirectional);
      ASSERT_NE(t.src, t.dst);
      ASSERT_TRUE(senders.insert({t.src, t.rail}).second) << "a sender's NIC twice in round " << r;
      ++writers[{t.dst, t.rail}];
      sender_nodes.insert(t.src);
      target_nodes.insert(t.dst);
      // Target t's senders are its K successors.
      ASSERT_LE((t.src + n - t.dst) % n, k);
      ASSERT_TRUE(seen.insert({t.src, t.dst, t.rail}).second);
    }
    for (const auto& [key, count] : writers) ASSERT_EQ(count, k) << "fan-in of node " << key.first << " round " << r;
    for (uint32_t node : sender_nodes) ASSERT_FALSE(target_nodes.count(node)) << "node " << node << " sends and receives";
    if (cap > 0) {
      ASSERT_LE(s->Round(r).size(), cap);
    }
  }
  ASSERT_TRUE(ValidateSchedule(*s, nodes, MaxFanIn(o)).ok()) << ValidateSchedule(*s, nodes, MaxFanIn(o));
  // Exclusive validation must refuse it whenever a target has 2+ writers.
  if (k > 1) {
    ASSERT_FALSE(ValidateSchedule(*s, nodes).ok());
  }
}

TEST(Incast, EveryNodeIsTheTargetOfKSendersInOneRoundForEveryNAndK) {
  for (uint32_t n = 2; n <= 40; ++n) {
    for (uint32_t k = 1; k < n; ++k) {
      CheckIncast(n, k, 1);
      if (HasFatalFailure()) return;
    }
  }
  for (uint32_t n : {255u, 1025u}) {
    for (uint32_t k : {1u, 3u, 7u, n - 1}) {
      CheckIncast(n, k, 1);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Incast, RailsRunInParallelAndTheCapKeepsGroupsWhole) {
  CheckIncast(8, 3, 4);
  CheckIncast(9, 2, 2, /*cap=*/2);  // one group per round
  CheckIncast(12, 3, 1, /*cap=*/7);  // two groups fit, a third closes the round
  auto nodes = Nodes(8, {0, 1});
  ScheduleOptions o;
  o.mode = Mode::kIncast;
  o.fan_in = 3;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok());
  // 8 nodes, groups of 4: two groups per round, both rails in parallel.
  EXPECT_EQ(s->MaxRoundSize(), 2u * 3 * 2);
}

TEST(Incast, RailsSharingAGpuGoToSeparateRounds) {
  auto nodes = Nodes(6, {0, 0});
  ScheduleOptions o;
  o.mode = Mode::kIncast;
  o.fan_in = 2;
  auto s = BuildSchedule(nodes, o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(ValidateSchedule(*s, nodes, 2).ok()) << ValidateSchedule(*s, nodes, 2);
  for (size_t r = 0; r < s->rounds(); ++r) {
    std::set<uint32_t> rails;
    for (const schedule::Test& t : s->Round(r)) rails.insert(t.rail);
    EXPECT_EQ(rails.size(), 1u) << "round " << r;
  }
}

TEST(Incast, BadFanInBidirectionalAndCapAreOneSentence) {
  auto nodes = Nodes(4);
  ScheduleOptions o;
  o.mode = Mode::kIncast;
  for (uint32_t k : {0u, 4u, 5u, 1000000000u}) {
    o.fan_in = k;
    auto s = BuildSchedule(nodes, o);
    ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << k;
    EXPECT_THAT(std::string(s.status().message()),
                testing::HasSubstr(absl::StrCat("--fan-in ", k, ": give 1 .. 3")));
  }
  o.fan_in = 2;
  o.bidirectional = true;
  EXPECT_THAT(std::string(BuildSchedule(nodes, o).status().message()),
              testing::HasSubstr("--mode incast is one-directional"));
  o.bidirectional = false;
  o.max_concurrent = 1;
  EXPECT_THAT(std::string(BuildSchedule(nodes, o).status().message()),
              testing::HasSubstr("--max-concurrent 1 is below --fan-in 2"));
  EXPECT_EQ(ParseMode("incast").value(), Mode::kIncast);
  EXPECT_STREQ(ModeName(Mode::kIncast), "incast");
  EXPECT_EQ(MaxFanIn(o), 2u);
  o.mode = Mode::kAllPairs;
  EXPECT_EQ(MaxFanIn(o), 1u);
}

TEST(Validate, FanInRelaxesTheTargetSideOnly) {
  auto nodes = Nodes(5);
  auto round = [](std::vector<schedule::Test> tests) {
    Schedule s;
    for (const schedule::Test& t : tests) s.Add(t);
    s.CloseRound();
    return s;
  };
  auto msg = [&](const Schedule& s, uint32_t fan_in) {
    return std::string(ValidateSchedule(s, nodes, fan_in).message());
  };
  // Three writers into node 0: fine at fan-in 3, one too many at 2.
  Schedule three = round({{1, 0, 0, false}, {2, 0, 0, false}, {3, 0, 0, false}});
  EXPECT_TRUE(ValidateSchedule(three, nodes, 3).ok());
  EXPECT_THAT(msg(three, 2), testing::HasSubstr("round 0: NIC of rail 0 on node 0 is written to by more than 2 tests"));
  EXPECT_THAT(msg(three, 1), testing::HasSubstr("NIC of rail 0 on node 0 is in two tests"));
  // A sender in two tests, even to two targets.
  EXPECT_THAT(msg(round({{1, 0, 0, false}, {1, 2, 0, false}}), 4),
              testing::HasSubstr("NIC of rail 0 on node 1 sends in two tests"));
  // A node that is written to and sends in one round (either order).
  EXPECT_THAT(msg(round({{1, 0, 0, false}, {0, 2, 0, false}}), 4),
              testing::HasSubstr("NIC of rail 0 on node 0 sends and is written to in one round"));
  EXPECT_THAT(msg(round({{0, 2, 0, false}, {1, 0, 0, false}}), 4),
              testing::HasSubstr("NIC of rail 0 on node 0 sends and is written to in one round"));
  // GPUs: a target's GPU is shared by its writers, a sender's is not.
  auto gpu_nodes = Nodes(4, {0, 0});
  Schedule gpu_two = round({{1, 0, 0, false}, {2, 0, 1, false}});  // node 0's GPU via rails 0 and 1
  EXPECT_TRUE(ValidateSchedule(gpu_two, gpu_nodes, 2).ok());
  EXPECT_THAT(std::string(ValidateSchedule(gpu_two, gpu_nodes, 1).message()),
              testing::HasSubstr("GPU 0 on node 0 is in two tests"));
  Schedule gpu_sender = round({{1, 0, 0, false}, {1, 2, 1, false}});
  EXPECT_THAT(std::string(ValidateSchedule(gpu_sender, gpu_nodes, 2).message()),
              testing::HasSubstr("GPU 0 on node 1 sends in two tests"));
}

// --mode cover | shift: the fabric plan's rounds as given (one round each),
// split only where two rails of a node share a GPU or the cap says so.
TEST(Planned, TakesTheRoundsAsGivenAndSplitsOnlyForASharedGpuOrTheCap) {
  ScheduleOptions o;
  o.mode = Mode::kCover;
  o.planned = {
      {schedule::Test{0, 1, 0}, schedule::Test{2, 3, 0}, schedule::Test{0, 2, 1}, schedule::Test{1, 3, 1}},
      {schedule::Test{1, 0, 0}, schedule::Test{3, 2, 1}}};
  auto s = BuildSchedule(Nodes(4, {0, 1}), o);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->rounds(), 2u);
  EXPECT_EQ(s->Round(0).size(), 4u);
  EXPECT_EQ(s->Round(1).size(), 2u);
  EXPECT_TRUE(ValidateSchedule(*s, Nodes(4, {0, 1})).ok());

  // Rails 0 and 1 of every node on GPU 0: node 0 is in two tests of round 0 on one GPU.
  s = BuildSchedule(Nodes(4, {0, 0}), o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rounds(), 3u);
  EXPECT_EQ(s->tests(), 6u);
  EXPECT_TRUE(ValidateSchedule(*s, Nodes(4, {0, 0})).ok());

  o.max_concurrent = 1;
  s = BuildSchedule(Nodes(4, {0, 1}), o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rounds(), 6u);
  EXPECT_EQ(s->MaxRoundSize(), 1u);
}

TEST(Planned, NoRoundsBidirectionalOrABadTestAreOneSentence) {
  ScheduleOptions o;
  o.mode = Mode::kShift;
  EXPECT_EQ(BuildSchedule(Nodes(4), o).status().message(),
            "--mode shift needs the fabric's cables: give --topology (a planned round)");
  o.planned = {{schedule::Test{0, 1, 0}}};
  o.bidirectional = true;
  EXPECT_THAT(std::string(BuildSchedule(Nodes(4), o).status().message()),
              ::testing::HasSubstr("--mode shift plans one direction per flow"));
  o.bidirectional = false;
  o.planned = {{schedule::Test{0, 1, 1}}};
  EXPECT_EQ(BuildSchedule(Nodes(4), o).status().message(),
            "--mode shift: planned round 0 has a test (node 0 rail 1 -> node 1 rail 1) the nodes' shapes do "
            "not have");
  o.planned = {{schedule::Test{0, 7, 0}}};
  EXPECT_EQ(BuildSchedule(Nodes(4), o).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMode("cover").value(), Mode::kCover);
  EXPECT_EQ(ParseMode("shift").value(), Mode::kShift);
  EXPECT_STREQ(ModeName(Mode::kCover), "cover");
  EXPECT_TRUE(FabricMode(Mode::kShift));
  EXPECT_FALSE(FabricMode(Mode::kAllPairs));
}

TEST(Schedule, RejectsTooFewNodes) {
  EXPECT_FALSE(BuildSchedule(Nodes(1), {}).ok());
  EXPECT_FALSE(ParseMode("star").ok());
}

TEST(Estimate, IterationsAtLinkRate) {
  EstimateParams p;
  p.sizes_bytes = {1 << 20};
  p.iterations = 1000;
  p.link_gbps = 8.388608;  // exactly 1 ms per MiB
  p.per_test_overhead_s = 0.5;
  EXPECT_NEAR(EstimateTestSeconds(p), 1.5, 1e-9);
  p.duration_ns = 2'000'000'000;
  EXPECT_NEAR(EstimateTestSeconds(p), 2.5, 1e-9);
}

// Issue 12, item 9: tests are counted before anything is built. All-pairs
// over 32,768 8-rail nodes (the node cap) is 8.6 billion tests: the
// round-robin alone would allocate 4 GiB before the first test.
TEST(PlanCap, PlansPastTheTestCapAreOneSentenceBeforeAnythingIsBuilt) {
  ScheduleOptions o;
  auto big = BuildSchedule(Nodes(32768, {0, 1, 2, 3, 4, 5, 6, 7}), o);
  ASSERT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(),
            "the plan has 8589672448 tests (all-pairs over 32768 nodes and their rails), more than the "
            "16777216 one run holds: use --mode quick or ring, or split the nodes into several runs");
  // A pair counts only the rails both ends have: 2,000 nodes of one rail
  // and 2,000 of 8 rails, sorted by rails, node k shares r_k with each later.
  std::vector<NodeShape> mixed = Nodes(2000, {-1});
  for (const auto& n : Nodes(2000, {-1, -1, -1, -1, -1, -1, -1, -1})) mixed.push_back(n);
  auto m = BuildSchedule(mixed, o);
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  uint64_t shared = 0;
  for (uint64_t k = 0; k < 4000; ++k) shared += (k < 2000 ? 1 : 8) * (4000 - 1 - k);
  EXPECT_THAT(std::string(m.status().message()),
              ::testing::StartsWith(absl::StrCat("the plan has ", shared * 2, " tests")));
  // quick with absurd rounds too; a quick plan under the cap still builds.
  o.mode = Mode::kQuick;
  o.quick_matchings = 4'000'000'000u;
  EXPECT_EQ(BuildSchedule(Nodes(32768), o).status().code(), absl::StatusCode::kInvalidArgument);
  o.quick_matchings = 3;
  auto quick = BuildSchedule(Nodes(32768, {0, 1, 2, 3, 4, 5, 6, 7}), o);
  ASSERT_TRUE(quick.ok()) << quick.status();
  EXPECT_EQ(quick->tests(), 3u * 16384 * 8 * 2);
}

}  // namespace
}  // namespace gdrbench::controller::schedule
