#include "controller/analysis/verdicts.h"

#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "controller/analysis/blame.h"
#include "report/lane.h"

namespace gdrbench::controller::analysis {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Names(uint32_t n) {
  std::vector<std::string> v;
  for (uint32_t i = 0; i < n; ++i) v.push_back("n" + std::to_string(i));
  return v;
}

v1::PairResult Pair(uint32_t s, uint32_t d, uint32_t rail, double gbps, double expected = 100,
                    v1::ResultStatus st = v1::RESULT_STATUS_OK, const std::string& reason = "") {
  v1::PairResult r;
  r.mutable_src()->set_node("n" + std::to_string(s));
  r.mutable_dst()->set_node("n" + std::to_string(d));
  r.set_rail(rail);
  r.set_status(st);
  r.set_reason(reason);
  r.set_expected_gbps(expected);
  if (st == v1::RESULT_STATUS_OK) {
    for (uint64_t size : {4096ull, 1048576ull}) {
      auto* sz = r.add_sizes();
      sz->set_size_bytes(size);
      sz->set_bw_avg_gbps(size == 4096 ? gbps / 10 : gbps);
      sz->set_status(v1::RESULT_STATUS_OK);
    }
  }
  return r;
}

constexpr double kSkip = -2;  // a cell whose test was skipped (a node left out)

// All ordered pairs of n nodes on `rails` rails at `base` Gb/s, with
// `override` deciding some cells.
MatrixSet Full(uint32_t n, uint32_t rails,
               const std::function<double(uint32_t, uint32_t, uint32_t)>& gbps) {
  MatrixSet set(Names(n));
  for (uint32_t r = 0; r < rails; ++r) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        if (i == j) continue;
        double g = gbps(i, j, r);
        if (g == kSkip) {
          set.Add(Pair(i, j, r, 0, 100, v1::RESULT_STATUS_SKIPPED, "left out by preflight"));
        } else if (g < 0) {
          set.Add(Pair(i, j, r, 0, 100, v1::RESULT_STATUS_ERROR, "agent n" + std::to_string(i) + " unreachable"));
        } else {
          set.Add(Pair(i, j, r, g));
        }
      }
    }
  }
  return set;
}

std::vector<std::string> BlameList(const Outcome& o) {
  std::vector<std::string> v;
  for (const auto& b : o.blame) v.push_back(b.kind() + " " + b.subject());
  return v;
}

TEST(Verdicts, AllAtLineRatePasses) {
  auto set = Full(4, 1, [](auto, auto, auto) { return 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_TRUE(o.passed) << o.summary;
  EXPECT_EQ(o.cells, 12u);
  EXPECT_EQ(o.pass, 12u);
  EXPECT_TRUE(o.blame.empty());
  EXPECT_THAT(o.summary, HasSubstr("PASS: 12/12"));
  // Verdicts are on the largest size only; the small size is informational.
  auto ms = set.matrices();
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0]->at(0, 1).verdict, Verdict::kNone);
  EXPECT_EQ(ms[1]->at(0, 1).verdict, Verdict::kPass);
}

TEST(Verdicts, BelowNinetyPercentOfTheLinkIsLow) {
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) { return i == 0 && j == 1 ? 85.0 : 95.0; });
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_mad_k(0);  // absolute only
  auto o = Judge(set, p, nullptr, {});
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.low, 1u);
  auto* m = set.VerdictMatrices()[0];
  EXPECT_THAT(m->reasons.at(1), HasSubstr("85 Gb/s is 85% of the 100 Gb/s link"));
}

TEST(Blame, OneLowLinkBlamesTheLinkNotItsNodes) {
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) { return i == 1 && j == 3 ? 30.0 : 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("link n1->n3"));
  EXPECT_THAT(o.blame[0].reason(), HasSubstr("both nodes are fine"));
  EXPECT_NEAR(o.blame[0].evidence_gbps(), 30, 1e-6);
}

TEST(Blame, BothDirectionsOfALinkAreOneBlame) {
  auto set = Full(5, 1, [](uint32_t i, uint32_t j, auto) {
    return (i == 1 && j == 3) || (i == 3 && j == 1) ? 30.0 : 95.0;
  });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("link n1<->n3"));
}

TEST(Blame, ANodeLowWithEveryPartnerIsBlamed) {
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) { return i == 2 || j == 2 ? 40.0 : 95.0; });
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_min_fraction_of_link(0);  // fleet-relative only
  auto o = Judge(set, p, nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("node n2"));
  EXPECT_THAT(o.blame[0].reason(), HasSubstr("6 of its 6 cells"));
}

TEST(Blame, ADeadAgentIsANodeWithFailedCells) {
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) { return i == 3 || j == 3 ? -1.0 : 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_EQ(o.fail, 6u);
  EXPECT_EQ(o.pass, 6u);
  EXPECT_THAT(BlameList(o), testing::ElementsAre("node n3"));
  // Failed cells appear in every size's matrix with their reason.
  for (const auto* m : set.matrices()) {
    EXPECT_EQ(m->at(3, 0).status, v1::RESULT_STATUS_ERROR);
    EXPECT_THAT(m->reasons.at(3 * 4 + 0), HasSubstr("unreachable"));
  }
}

TEST(Blame, ADeadNodeDoesNotDragANeighbourWithOneNoisyCell) {
  // n3 dead; n0 -> n1 noisy-low: n0 has 2 failed + 1 low of 6 cells, which
  // is not "most partners" once n3's cells are explained by n3.
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) {
    if (i == 3 || j == 3) return -1.0;
    return i == 0 && j == 1 ? 20.0 : 95.0;
  });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("node n3", "link n0->n1"));
}

TEST(Blame, ALowRailIsBlamedAsARail) {
  auto set = Full(6, 3, [](auto, auto, uint32_t r) { return r == 1 ? 45.0 : 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("rail rail 1"));
  EXPECT_EQ(BlameLabel(o.blame[0]), "rail 1");
  EXPECT_THAT(o.summary, HasSubstr("blame: rail 1"));
  EXPECT_THAT(o.summary, testing::Not(HasSubstr("rail rail")));
}

TEST(Blame, ANodeLowOnOneRailOnlyIsItsNic) {
  auto set = Full(6, 2, [](uint32_t i, uint32_t j, uint32_t r) {
    return r == 1 && (i == 4 || j == 4) ? 45.0 : 95.0;
  });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("nic n4 rail 1"));
}

// Cross-rail: every ordered pair on every (rail, other rail) lane of `rails`.
MatrixSet CrossRail(uint32_t n, uint32_t rails,
                    const std::function<double(uint32_t, uint32_t, uint32_t, uint32_t)>& gbps) {
  MatrixSet set(Names(n));
  for (uint32_t r = 0; r < rails; ++r) {
    for (uint32_t d = 0; d < rails; ++d) {
      if (d == r) continue;
      for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
          if (i == j) continue;
          const double g = gbps(i, j, r, d);
          v1::PairResult p = g < 0 ? Pair(i, j, r, 0, 100, v1::RESULT_STATUS_ERROR, "no route") : Pair(i, j, r, g);
          p.set_dst_rail(d);
          set.Add(p);
        }
      }
    }
  }
  return set;
}

TEST(Matrix, CrossRailLanesAreMatricesOfTheirOwn) {
  // Lane 0->1 at 90, 1->0 at 70: one (src, dst, rail) per lane, never mixed.
  auto set = CrossRail(3, 2, [](auto, auto, uint32_t r, auto) { return r == 0 ? 90.0 : 70.0; });
  auto all = set.matrices();
  ASSERT_EQ(all.size(), 4u);  // 2 lanes x 2 sizes
  auto vms = set.VerdictMatrices();
  ASSERT_EQ(vms.size(), 2u);
  EXPECT_EQ(vms[0]->rail, 0u);
  EXPECT_EQ(vms[0]->dst_rail, 1u);
  EXPECT_EQ(vms[1]->rail, 1u);
  EXPECT_EQ(vms[1]->dst_rail, 0u);
  EXPECT_EQ(vms[0]->at(0, 1).gbps, 90.0f);
  EXPECT_EQ(vms[1]->at(0, 1).gbps, 70.0f);
  v1::BandwidthMatrix p = ToProto(*vms[1], set.nodes());
  ASSERT_TRUE(p.has_dst_rail());
  EXPECT_EQ(p.dst_rail(), 0u);  // present though 0: lane 1->0, not rail 1
  EXPECT_EQ(p.cells_size(), 6);
  EXPECT_FALSE(ToProto(*Full(3, 1, [](auto, auto, auto) { return 95.0; }).VerdictMatrices()[0], Names(3))
                   .has_dst_rail());
  EXPECT_EQ(LaneName(*vms[0]), "rail 0->1");
  EXPECT_EQ(LaneName(2, 2), "rail 2");
  EXPECT_NE(LaneKey(0, 1), LaneKey(1, 0));
  EXPECT_NE(LaneKey(0, 1), LaneKey(0, 0));
  EXPECT_EQ(LaneKey(3, 3), 3u);
  // A failed cross-rail test marks its own lane only.
  MatrixSet one(Names(2));
  v1::PairResult ok = Pair(0, 1, 0, 90);
  ok.set_dst_rail(1);
  one.Add(ok);
  v1::PairResult failed = Pair(1, 0, 0, 0, 100, v1::RESULT_STATUS_ERROR, "no route to 10.0.1.1");
  failed.set_dst_rail(1);
  one.Add(failed);
  v1::PairResult other_lane = Pair(0, 1, 1, 80);
  other_lane.set_dst_rail(0);
  one.Add(other_lane);
  for (const Matrix* m : one.matrices()) {
    const bool lane01 = m->rail == 0 && m->dst_rail == 1;
    EXPECT_EQ(m->at(1, 0).present(), lane01) << LaneName(*m) << " " << m->size_bytes;
  }
}

TEST(Matrix, AddByIndexFillsTheSameCellsAsByName) {
  // The runner hands the plan's node indices over (no name look-up per
  // test); a cell must land where the names would put it, and an index past
  // the node list is counted as unknown, as an unknown name is.
  MatrixSet by_name(Names(3)), by_index(Names(3));
  for (auto [s, d, gbps] : {std::tuple{0u, 2u, 91.0}, std::tuple{2u, 1u, 77.0}}) {
    by_name.Add(Pair(s, d, 0, gbps));
    by_index.Add(Pair(s, d, 0, gbps), s, d);
  }
  by_index.Add(Pair(1, 0, 0, 0, 100, v1::RESULT_STATUS_ERROR, "refused"), 1, 0);
  by_index.Add(Pair(0, 1, 0, 50), 0, 3);
  EXPECT_EQ(by_index.unknown_nodes(), 1u);
  const Matrix& m = *by_index.VerdictMatrices()[0];
  EXPECT_EQ(m.at(0, 2).gbps, 91.0f);
  EXPECT_EQ(m.at(2, 1).gbps, 77.0f);
  EXPECT_EQ(m.at(1, 0).status, v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(m.reasons.at(1 * 3 + 0), "refused");
  EXPECT_FALSE(m.at(0, 1).present());
  const Matrix& n = *by_name.VerdictMatrices()[0];
  for (uint32_t i = 0; i < 3; ++i) {
    for (uint32_t j = 0; j < 3; ++j) {
      if (i == 1 && j == 0) continue;
      EXPECT_EQ(m.at(i, j).gbps, n.at(i, j).gbps) << i << "->" << j;
      EXPECT_EQ(m.at(i, j).status, n.at(i, j).status) << i << "->" << j;
    }
  }
}

TEST(Blame, ACrossRailLaneAloneLowIsBlamedAsThatLane) {
  auto set = CrossRail(6, 3, [](auto, auto, uint32_t r, uint32_t d) { return r == 2 && d == 0 ? 45.0 : 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("rail rail 2->0"));
  EXPECT_THAT(o.blame[0].reason(), HasSubstr("suspect the path between the two rails"));
  EXPECT_THAT(o.summary, HasSubstr("blame: rail 2->0"));
  // One node's NIC bad on one lane: named with the lane.
  auto nic = CrossRail(6, 2, [](uint32_t i, uint32_t j, uint32_t r, auto) {
    return r == 1 && (i == 4 || j == 4) ? 45.0 : 95.0;
  });
  EXPECT_THAT(BlameList(Judge(nic, DefaultPolicy(), nullptr, {})), testing::ElementsAre("nic n4 rail 1->0"));
  // A link low on one lane only: a link blame with the lane.
  auto link = CrossRail(6, 2, [](uint32_t i, uint32_t j, uint32_t r, auto) {
    return r == 0 && i == 1 && j == 3 ? 45.0 : 95.0;
  });
  EXPECT_THAT(BlameList(Judge(link, DefaultPolicy(), nullptr, {})), testing::ElementsAre("link n1->n3 rail 0->1"));
}

TEST(Verdicts, ABaselineIsComparedLaneByLane) {
  auto base_set = CrossRail(3, 2, [](auto, auto, uint32_t r, auto) { return r == 0 ? 95.0 : 60.0; });
  Judge(base_set, DefaultPolicy(), nullptr, {});
  v1::Run base;
  for (const auto* m : base_set.matrices()) *base.add_matrices() = ToProto(*m, base_set.nodes());
  auto baseline = Baseline::FromRun(base);
  ASSERT_TRUE(baseline.ok());
  EXPECT_DOUBLE_EQ(baseline->Get("n0", "n1", 0, 1, 1048576), 95.0);
  EXPECT_DOUBLE_EQ(baseline->Get("n0", "n1", 1, 0, 1048576), 60.0);
  EXPECT_DOUBLE_EQ(baseline->Get("n0", "n1", 0, 0, 1048576), 0.0);  // no same-rail cell in it
  auto set = CrossRail(3, 2, [](auto, auto, uint32_t r, auto) { return r == 0 ? 95.0 : 60.0; });
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_mad_k(0);
  p.set_min_fraction_of_link(0);
  auto o = Judge(set, p, &*baseline, {});
  EXPECT_EQ(o.low, 0u) << o.summary;  // lane 1->0's 60 is compared with its own 60, not 0->1's 95
}

TEST(Verdicts, BaselineRegressionIsLow) {
  auto base_set = Full(3, 1, [](auto, auto, auto) { return 95.0; });
  Judge(base_set, DefaultPolicy(), nullptr, {});
  v1::Run base;
  for (const auto* m : base_set.matrices()) *base.add_matrices() = ToProto(*m, base_set.nodes());
  auto baseline = Baseline::FromRun(base);
  ASSERT_TRUE(baseline.ok());
  auto set = Full(3, 1, [](uint32_t i, uint32_t j, auto) { return i == 0 && j == 2 ? 88.0 : 95.0; });
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_mad_k(0);
  auto o = Judge(set, p, &*baseline, {});
  EXPECT_EQ(o.low, 1u);
  EXPECT_THAT(set.VerdictMatrices()[0]->reasons.at(2), HasSubstr("below the baseline 95"));
  EXPECT_FALSE(Baseline::FromRun(v1::Run()).ok());
}

// Two nodes equally bad: n0 and n1 are each low with two of their three
// partners (n0 with n1 and n2, n1 with n0 and n3). Accepting n0 first used
// to clear n1 (leaving the link n1<->n3 blamed): a tie names both.
TEST(Blame, NodesTiedAtTheWorstRatioAreAllNamed) {
  auto set = Full(4, 1, [](uint32_t i, uint32_t j, auto) {
    auto is = [&](uint32_t a, uint32_t b) { return (i == a && j == b) || (i == b && j == a); };
    return is(0, 1) || is(0, 2) || is(1, 3) ? 30.0 : 95.0;
  });
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_THAT(BlameList(o), testing::ElementsAre("node n0", "node n1"));
}

// Every cell low: nothing singles out a node or a link, and blaming some
// nodes (two of three, as before) would send the operator to the wrong
// place. The fleet is named instead, and nothing else.
TEST(Blame, EveryCellBadBlamesTheFleetNotSomeNodes) {
  for (uint32_t n : {2u, 3u, 5u}) {
    auto set = Full(n, 1, [](auto, auto, auto) { return 40.0; });
    auto o = Judge(set, DefaultPolicy(), nullptr, {});
    EXPECT_THAT(BlameList(o), testing::ElementsAre("fleet every node")) << n << " nodes";
    EXPECT_THAT(o.blame[0].reason(), HasSubstr(absl::StrCat("all ", n * (n - 1), " cells")));
    EXPECT_THAT(o.summary, HasSubstr("blame: every node"));
  }
  auto dead = Full(3, 1, [](auto, auto, auto) { return -1.0; });
  EXPECT_THAT(BlameList(Judge(dead, DefaultPolicy(), nullptr, {})), testing::ElementsAre("fleet every node"));
  // Two rails, both bad everywhere: each rail says so.
  auto rails = Full(3, 2, [](auto, auto, auto) { return 40.0; });
  EXPECT_THAT(BlameList(Judge(rails, DefaultPolicy(), nullptr, {})),
              testing::ElementsAre("fleet every node on rail 0", "fleet every node on rail 1"));
  // One rail bad everywhere beside a clean one is still the rail.
  auto one = Full(3, 2, [](auto, auto, uint32_t r) { return r == 0 ? 40.0 : 95.0; });
  EXPECT_THAT(BlameList(Judge(one, DefaultPolicy(), nullptr, {})), testing::ElementsAre("rail rail 0"));
}

// A node left out by preflight: its cells are SKIPPED, counted as skipped
// (not failed), blame nobody, and the headline names the node.
TEST(Verdicts, SkippedCellsAreSkippedNotFailedAndBlameNobody) {
  auto set = Full(3, 1, [](uint32_t i, uint32_t j, auto) { return i == 2 || j == 2 ? kSkip : 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {"n2: preflight FAIL (peermem_loaded)"});
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.skipped, 4u);
  EXPECT_EQ(o.fail, 0u);
  EXPECT_TRUE(o.blame.empty()) << BlameList(o)[0];
  EXPECT_EQ(o.summary, "FAIL: 2/6 cells pass; 4 not run, 1 node(s) left out (n2)");
  EXPECT_EQ(set.VerdictMatrices()[0]->at(2, 0).verdict, Verdict::kNone);

  // Both nodes of a pair left out: both named, neither blamed over the other.
  auto both = Full(2, 1, [](auto, auto, auto) { return kSkip; });
  auto b = Judge(both, DefaultPolicy(), nullptr, {"a: preflight FAIL (x)", "b: preflight FAIL (x)"});
  EXPECT_TRUE(b.blame.empty());
  EXPECT_EQ(b.summary, "FAIL: 0/2 cells pass; 2 not run, 2 node(s) left out (a, b)");
}

TEST(Verdicts, ExcludedNodesFailTheRun) {
  auto set = Full(3, 1, [](auto, auto, auto) { return 95.0; });
  auto o = Judge(set, DefaultPolicy(), nullptr, {"n9"});
  EXPECT_FALSE(o.passed);
  EXPECT_THAT(o.summary, HasSubstr("1 node(s) left out"));
}

TEST(Matrix, ProtoHasCellsStatsAndBidirectionalReverseCells) {
  MatrixSet set(Names(3), /*bidirectional=*/true);
  auto add = [&](uint32_t a, uint32_t b, double fwd, double rev) {
    v1::PairResult p = Pair(a, b, 0, fwd, 100);
    for (const auto& s : p.sizes()) {
      auto* r = p.add_reverse_sizes();
      *r = s;
      r->set_bw_avg_gbps(s.bw_avg_gbps() * rev / fwd);
    }
    set.Add(p);
  };
  add(0, 1, 95, 94);
  add(1, 2, 96, 97);
  v1::PairResult failed = Pair(2, 0, 0, 0, 100, v1::RESULT_STATUS_FAILED, "retry exceeded");
  set.Add(failed);
  auto o = Judge(set, DefaultPolicy(), nullptr, {});
  EXPECT_EQ(o.fail, 2u);  // both directions of the failed test
  auto pm = ToProto(*set.VerdictMatrices()[0], set.nodes());
  EXPECT_EQ(pm.cells_size(), 6);
  EXPECT_EQ(pm.rows_size(), 3);
  EXPECT_EQ(pm.fleet().ok_cells(), 4u);
  EXPECT_EQ(pm.fleet().bad_cells(), 2u);
  EXPECT_NEAR(pm.fleet().median_gbps(), 95.5, 1e-3);
  EXPECT_NEAR(pm.rows(1).min_gbps(), 94, 1e-3);  // 1 -> 0 is the reverse of 0 -> 1
  EXPECT_EQ(pm.cells(0).expected_gbps(), 100);
}

}  // namespace
}  // namespace gdrbench::controller::analysis

namespace gdrbench::controller::analysis {
namespace {

// A tight fleet (every cell within 1 %) must not flag a 4 % dip: the
// fleet-relative verdict also needs fleet_min_drop (10 %) below the median.
TEST(Verdicts, FleetRelativeIgnoresDipsSmallerThanTheMinimumDrop) {
  auto dip = [](double low) {
    return Full(4, 1, [low](uint32_t i, uint32_t j, auto) {
      if (i == 1 && j == 2) return low;
      return 95.0 + 0.1 * ((i * 4 + j) % 5);
    });
  };
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_min_fraction_of_link(0);
  auto small = dip(91.0);
  EXPECT_EQ(Judge(small, p, nullptr, {}).low, 0u);
  auto big = dip(80.0);
  EXPECT_EQ(Judge(big, p, nullptr, {}).low, 1u);
  p.set_fleet_min_drop(0);
  auto small_strict = dip(91.0);
  EXPECT_EQ(Judge(small_strict, p, nullptr, {}).low, 1u);
}

}  // namespace
}  // namespace gdrbench::controller::analysis
