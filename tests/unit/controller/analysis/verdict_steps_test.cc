// The steps of analysis::Judge, each on its own (Judge end to end:
// verdicts_test.cc). Matrices are built cell by cell here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/analysis/blame.h"
#include "controller/analysis/verdicts.h"

namespace gdrbench::controller::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kNames = {"n0", "n1", "n2", "n3", "n4", "n5"};

// An n x n matrix with every off-diagonal cell OK at `gbps` of a 100 Gb/s link.
Matrix Uniform(uint32_t n, double gbps, uint32_t rail = 0) {
  Matrix m;
  m.rail = rail;
  m.size_bytes = 1 << 20;
  m.n = n;
  m.cells.resize(size_t{n} * n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      if (i == j) continue;
      Cell& c = m.at(i, j);
      c.gbps = static_cast<float>(gbps);
      c.expected_gbps = 100;
      c.status = v1::RESULT_STATUS_OK;
    }
  }
  return m;
}

void SetNode(Matrix& m, uint32_t x, double gbps) {
  for (uint32_t y = 0; y < m.n; ++y) {
    if (y == x) continue;
    m.at(x, y).gbps = m.at(y, x).gbps = static_cast<float>(gbps);
  }
}

void Fail(Matrix& m, uint32_t i, uint32_t j, const std::string& why) {
  m.at(i, j).status = v1::RESULT_STATUS_ERROR;
  m.at(i, j).gbps = 0;
  m.reasons[i * m.n + j] = why;
}

Cell OkCell(double gbps, double expected = 100) {
  Cell c;
  c.gbps = static_cast<float>(gbps);
  c.expected_gbps = static_cast<float>(expected);
  c.status = v1::RESULT_STATUS_OK;
  return c;
}

// Judges m with `policy` (no baseline) so blame steps see verdicts.
Matrix Judged(Matrix m, v1::VerdictPolicy policy = DefaultPolicy()) {
  JudgeMatrix(m, kNames, policy, nullptr);
  return m;
}

// --- 1. fleet reference ---

TEST(FleetReference, AUniformFleetHasItsValueAndTheFloorSpread) {
  FleetReference f = ComputeFleetReference(Uniform(4, 95), DefaultPolicy());
  EXPECT_NEAR(f.median_gbps, 95, 1e-3);
  EXPECT_NEAR(f.mad, 0.01, 1e-9);  // no spread at all: floored at 1 %
  EXPECT_EQ(f.ok_cells, 12u);
  // min(exp(ref - 3 x 0.01), 0.9 x median): the minimum drop decides.
  EXPECT_NEAR(f.floor_gbps, 95 * 0.9, 1e-3);
}

TEST(FleetReference, OneBadNodeOfFourDoesNotMoveTheReference) {
  Matrix m = Uniform(4, 95);
  SetNode(m, 2, 40);  // in half of all cells
  FleetReference f = ComputeFleetReference(m, DefaultPolicy());
  EXPECT_NEAR(f.median_gbps, 95, 1.0);
  EXPECT_GT(f.floor_gbps, 40);
}

TEST(FleetReference, IsOffWithoutMadKOrWithFewerThanThreeCells) {
  v1::VerdictPolicy off = DefaultPolicy();
  off.set_mad_k(0);
  EXPECT_EQ(ComputeFleetReference(Uniform(4, 95), off).floor_gbps, -1);
  EXPECT_EQ(ComputeFleetReference(Uniform(2, 95), DefaultPolicy()).floor_gbps, -1);  // 2 cells
}

// --- 2. the three checks ---

TEST(AbsoluteVerdict, BelowTheFractionOfTheLinkSaysHowFar) {
  EXPECT_EQ(AbsoluteVerdict(OkCell(85), DefaultPolicy()),
            "85 Gb/s is 85% of the 100 Gb/s link (pass >= 90%)");
  EXPECT_EQ(AbsoluteVerdict(OkCell(90), DefaultPolicy()), "");
  EXPECT_EQ(AbsoluteVerdict(OkCell(10, 0), DefaultPolicy()), "");  // link rate unknown
  v1::VerdictPolicy off = DefaultPolicy();
  off.set_min_fraction_of_link(0);
  EXPECT_EQ(AbsoluteVerdict(OkCell(10), off), "");
}

TEST(FleetVerdict, BelowTheFloorNamesTheReference) {
  FleetReference f;
  f.median_gbps = 95;
  f.mad = 0.02;
  f.floor_gbps = 85.5;
  EXPECT_THAT(FleetVerdict(OkCell(60), f, DefaultPolicy()),
              HasSubstr("60 Gb/s is below the fleet floor 85.5 Gb/s (reference 95 Gb/s"));
  EXPECT_EQ(FleetVerdict(OkCell(90), f, DefaultPolicy()), "");
  f.floor_gbps = -1;
  EXPECT_EQ(FleetVerdict(OkCell(1), f, DefaultPolicy()), "");
}

TEST(BaselineVerdict, ADropPastTheToleranceIsLow) {
  EXPECT_EQ(BaselineVerdict(OkCell(88), 95, DefaultPolicy()),
            "88 Gb/s is 7.4% below the baseline 95 Gb/s");
  EXPECT_EQ(BaselineVerdict(OkCell(91), 95, DefaultPolicy()), "");  // within 5 %
  EXPECT_EQ(BaselineVerdict(OkCell(10), 0, DefaultPolicy()), "");   // no baseline value
  v1::VerdictPolicy off = DefaultPolicy();
  off.set_baseline_tolerance(0);
  EXPECT_EQ(BaselineVerdict(OkCell(10), 95, off), "");
}

// --- 3. a matrix's verdicts ---

TEST(JudgeMatrix, CountsAndReasonsPerCell) {
  Matrix m = Uniform(4, 95);
  m.at(0, 1).gbps = 50;                  // low by both checks
  Fail(m, 2, 3, "agent n2 unreachable");
  m.reasons[1 * 4 + 2] = "left from before a retest";  // (1, 2) passes now
  CellCounts c = JudgeMatrix(m, kNames, DefaultPolicy(), nullptr);
  EXPECT_EQ(c.cells, 12u);
  EXPECT_EQ(c.pass, 10u);
  EXPECT_EQ(c.low, 1u);
  EXPECT_EQ(c.fail, 1u);
  EXPECT_EQ(m.at(0, 1).verdict, Verdict::kLow);
  EXPECT_THAT(m.reasons.at(1), HasSubstr("of the 100 Gb/s link"));
  EXPECT_THAT(m.reasons.at(1), HasSubstr("; 50 Gb/s is below the fleet floor"));
  EXPECT_EQ(m.at(2, 3).verdict, Verdict::kFail);
  EXPECT_EQ(m.reasons.at(2 * 4 + 3), "agent n2 unreachable");  // a failure keeps its reason
  EXPECT_EQ(m.reasons.count(1 * 4 + 2), 0u);
}

TEST(JudgeMatrix, RecordsTheBaselineValueOfEachCell) {
  MatrixSet base_set({"n0", "n1", "n2"});
  v1::Run base;
  Matrix b = Judged(Uniform(3, 95));
  *base.add_matrices() = ToProto(b, {"n0", "n1", "n2"});
  auto baseline = Baseline::FromRun(base);
  ASSERT_TRUE(baseline.ok());
  Matrix m = Uniform(3, 95);
  m.at(0, 2).gbps = 88;
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_mad_k(0);
  CellCounts c = JudgeMatrix(m, kNames, p, &*baseline);
  EXPECT_EQ(c.low, 1u);
  EXPECT_NEAR(m.at(1, 0).baseline_gbps, 95, 1e-3);
  EXPECT_THAT(m.reasons.at(2), HasSubstr("below the baseline 95"));
}

// --- 4. blame ---

TEST(TallyRail, ADeadNodeIsAcceptedAndItsCellsStopCountingAgainstOthers) {
  Matrix m = Uniform(4, 95);
  for (uint32_t y = 0; y < 3; ++y) {
    Fail(m, 3, y, "dead");
    Fail(m, y, 3, "dead");
  }
  m.at(0, 1).gbps = 20;  // n0: 2 failed + 1 low of 6 cells, 1 of 4 once n3 is explained
  RailTally t = TallyRail(Judged(m));
  EXPECT_EQ(t.nodes_tested, 4u);
  EXPECT_EQ(t.nodes_bad, 1u);
  EXPECT_TRUE(t.bad_node[3]);
  EXPECT_FALSE(t.bad_node[0]);
  EXPECT_EQ(t.nodes[0].cells, 6u);
  EXPECT_EQ(t.nodes[0].bad, 3u);
  EXPECT_EQ(t.nodes[3].ok_values.size(), 0u);
}

TEST(RailBlames, MostNodesBadOnOneRailWhileAnotherIsClean) {
  std::vector<RailTally> rails = {TallyRail(Judged(Uniform(6, 95, 0))),
                                  TallyRail(Judged(Uniform(6, 95, 1)))};
  std::set<uint64_t> bad;
  EXPECT_TRUE(RailBlames(rails, &bad).empty());
  Matrix low = Uniform(6, 95, 1);
  for (uint32_t x = 0; x < 6; ++x) SetNode(low, x, 40);
  v1::VerdictPolicy abs_only = DefaultPolicy();
  abs_only.set_mad_k(0);
  rails[1] = TallyRail(Judged(low, abs_only));
  auto blame = RailBlames(rails, &bad);
  ASSERT_EQ(blame.size(), 1u);
  EXPECT_EQ(blame[0].subject(), "rail 1");
  // Every node is equally low, so all are accepted at once (ties): 6 of 6
  // (accepting them one by one left the last with no cells: "5 of 6").
  EXPECT_THAT(blame[0].reason(), HasSubstr("6 of 6 nodes"));
  EXPECT_NEAR(blame[0].evidence_gbps(), 40, 1e-3);
  EXPECT_EQ(bad, std::set<uint64_t>{1});
  // With a single rail there is nothing to compare with: no rail blame.
  std::set<uint64_t> none;
  EXPECT_TRUE(RailBlames({rails[1]}, &none).empty());
}

TEST(NodeBlames, BadOnEveryRailIsTheNodeOnSomeItsNic) {
  Matrix r0 = Uniform(6, 95, 0), r1 = Uniform(6, 95, 1);
  SetNode(r0, 2, 40);
  SetNode(r1, 2, 40);  // n2 on both rails
  SetNode(r1, 4, 40);  // n4 on rail 1 only
  std::vector<RailTally> rails = {TallyRail(Judged(r0)), TallyRail(Judged(r1))};
  std::set<std::pair<uint32_t, uint64_t>> explained;
  auto blame = NodeBlames(rails, {}, kNames, &explained);
  ASSERT_EQ(blame.size(), 2u);
  EXPECT_EQ(blame[0].kind(), "node");
  EXPECT_EQ(blame[0].subject(), "n2");
  EXPECT_THAT(blame[0].reason(), HasSubstr("on all 2 rails"));
  EXPECT_EQ(blame[1].kind(), "nic");
  EXPECT_EQ(blame[1].subject(), "n4 rail 1");
  EXPECT_TRUE(explained.count({2, 0}) && explained.count({2, 1}) && explained.count({4, 1}));
  EXPECT_FALSE(explained.count({4, 0}));
  // A rail already blamed is not blamed on its nodes again.
  std::set<std::pair<uint32_t, uint64_t>> e2;
  auto without_rail1 = NodeBlames(rails, {1}, kNames, &e2);
  ASSERT_EQ(without_rail1.size(), 1u);
  EXPECT_EQ(without_rail1[0].subject(), "n2 rail 0");
  EXPECT_TRUE(e2.count({4, 1}));  // explained by the rail
}

TEST(LinkBlames, UnexplainedBadCellsAreLinksBothDirectionsOnce) {
  Matrix m = Uniform(5, 95);
  m.at(1, 3).gbps = m.at(3, 1).gbps = 30;
  m.at(0, 4).gbps = 30;
  Fail(m, 2, 0, "RunWriteSweep on n2: IBV_WC_RETRY_EXC_ERR");
  Matrix j = Judged(m);
  auto blame = LinkBlames({&j}, kNames, {});
  std::vector<std::string> subjects;
  for (const auto& b : blame) subjects.push_back(b.subject());
  EXPECT_THAT(subjects, ElementsAre("n0->n4", "n1<->n3", "n2->n0"));
  EXPECT_THAT(blame[2].reason(), HasSubstr("IBV_WC_RETRY_EXC_ERR; both nodes are fine"));
  EXPECT_NEAR(blame[0].evidence_gbps(), 30, 1e-3);
  // Cells a node blame explains are not links.
  auto explained = LinkBlames({&j}, kNames, {{1, 0}, {0, 0}, {2, 0}});
  EXPECT_TRUE(explained.empty());
}

// --- 5. summary ---

TEST(Summarize, PassOrWhatFailedAndWho) {
  Outcome pass;
  pass.cells = pass.pass = 12;
  Summarize({}, &pass);
  EXPECT_TRUE(pass.passed);
  EXPECT_EQ(pass.summary, "PASS: 12/12 cells pass");

  Outcome fail;
  fail.cells = 12;
  fail.pass = 9;
  fail.low = 2;
  fail.fail = 1;
  for (int i = 0; i < 10; ++i) {
    v1::Blame b;
    b.set_kind("link");
    b.set_subject("a" + std::to_string(i));
    fail.blame.push_back(b);
  }
  Summarize({"n3: preflight FAIL (mtu)"}, &fail);
  EXPECT_FALSE(fail.passed);
  EXPECT_EQ(fail.summary,
            "FAIL: 9/12 cells pass; 2 low, 1 failed, 1 node(s) left out (n3); blame: link a0, link a1, "
            "link a2, link a3, link a4, link a5, link a6, link a7, and 2 more");

  Outcome excluded_only;
  excluded_only.cells = excluded_only.pass = 2;
  Summarize({"n9: agent unreachable"}, &excluded_only);
  EXPECT_FALSE(excluded_only.passed);

  Outcome nothing;
  Summarize({}, &nothing);
  EXPECT_EQ(nothing.summary, "FAIL: 0/0 cells pass; no cell was measured");
}

}  // namespace
}  // namespace gdrbench::controller::analysis
