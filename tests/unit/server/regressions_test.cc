// Regression maths and roll-up (server/history/regressions.h) on hand-made
// compared cells: what a drop is, and link / node / NIC / rail roll-up with
// the rules of blame.
#include "server/history/regressions.h"

#include "gtest/gtest.h"

namespace gdrbench::server::history {
namespace {

auto Names(int n) {
  auto v = std::make_shared<std::vector<std::string>>();
  for (int i = 0; i < n; ++i) v->push_back("n" + std::to_string(i));
  return std::shared_ptr<const std::vector<std::string>>(v);
}

// Every ordered pair of n nodes at 100 Gb/s before; `after` decides now.
std::vector<ComparedCell> AllPairs(int n, const std::function<float(uint32_t, uint32_t)>& after) {
  std::vector<ComparedCell> out;
  for (uint32_t i = 0; i < static_cast<uint32_t>(n); ++i) {
    for (uint32_t j = 0; j < static_cast<uint32_t>(n); ++j) {
      if (i != j) out.push_back({i, j, 100.0f, after(i, j), after(i, j) > 0});
    }
  }
  return out;
}

TEST(Dropped, PastTheToleranceOnly) {
  EXPECT_FALSE(Dropped(100, 95, 0.05));
  EXPECT_TRUE(Dropped(100, 94.9, 0.05));
  EXPECT_FALSE(Dropped(0, 10, 0.05));  // nothing to compare with
  EXPECT_TRUE(Dropped(100, 0, 0.05));
}

TEST(RegressionBuilder, NoReferenceComparesNothing) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "", 0.05);
  v1::RegressionReport r = b.Finish();
  EXPECT_EQ(r.compared_cells(), 0u);
  EXPECT_EQ(r.summary(), "no baseline is set: nothing compared");
}

TEST(RegressionBuilder, OneSlowLinkIsTheLink) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.05);
  b.AddRail(0, 1 << 20, Names(4), AllPairs(4, [](uint32_t i, uint32_t j) {
              return i == 1 && j == 2 ? 60.0f : 99.0f;
            }));
  v1::RegressionReport r = b.Finish();
  EXPECT_EQ(r.compared_cells(), 12u);
  EXPECT_EQ(r.regressed_cells(), 1u);
  ASSERT_EQ(r.regressions_size(), 1);
  const auto& g = r.regressions(0);
  EXPECT_EQ(g.kind(), v1::REGRESSION_KIND_LINK);
  EXPECT_EQ(g.subject(), "n1->n2");
  EXPECT_EQ(g.src(), "n1");
  EXPECT_EQ(g.dst(), "n2");
  EXPECT_DOUBLE_EQ(g.before_gbps(), 100);
  EXPECT_DOUBLE_EQ(g.after_gbps(), 60);
  EXPECT_NEAR(g.drop_fraction(), 0.4, 1e-6);
  EXPECT_NE(r.summary().find("1 of 12 cells regressed against the baseline base: n1->n2"),
            std::string::npos)
      << r.summary();
}

TEST(RegressionBuilder, BothDirectionsAreOneLink) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_LAST_PASS, "prev", 0.05);
  b.AddRail(0, 1 << 20, Names(4), AllPairs(4, [](uint32_t i, uint32_t j) {
              return (i == 1 && j == 2) || (i == 2 && j == 1) ? 50.0f : 100.0f;
            }));
  v1::RegressionReport r = b.Finish();
  ASSERT_EQ(r.regressions_size(), 1);
  EXPECT_EQ(r.regressions(0).subject(), "n1<->n2");
}

TEST(RegressionBuilder, ANodeSlowWithEveryPartnerIsTheNode) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.05);
  b.AddRail(0, 1 << 20, Names(6), AllPairs(6, [](uint32_t i, uint32_t j) {
              return i == 3 || j == 3 ? 40.0f : 100.0f;
            }));
  v1::RegressionReport r = b.Finish();
  ASSERT_EQ(r.regressions_size(), 1) << r.summary();
  EXPECT_EQ(r.regressions(0).kind(), v1::REGRESSION_KIND_NODE);
  EXPECT_EQ(r.regressions(0).subject(), "n3");
  EXPECT_EQ(r.regressions(0).cells(), 10u);
}

TEST(RegressionBuilder, ANodeSlowOnOneOfTwoRailsIsItsNic) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.05);
  auto fine = [](uint32_t, uint32_t) { return 100.0f; };
  b.AddRail(0, 1 << 20, Names(6), AllPairs(6, fine));
  b.AddRail(1, 1 << 20, Names(6), AllPairs(6, [](uint32_t i, uint32_t j) {
              return i == 4 || j == 4 ? 0.0f : 100.0f;  // failing now
            }));
  v1::RegressionReport r = b.Finish();
  ASSERT_EQ(r.regressions_size(), 1) << r.summary();
  EXPECT_EQ(r.regressions(0).kind(), v1::REGRESSION_KIND_NIC);
  EXPECT_EQ(r.regressions(0).subject(), "n4 rail 1");
}

TEST(RegressionBuilder, MostNodesOfARailIsTheRail) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.05);
  b.AddRail(0, 1 << 20, Names(4), AllPairs(4, [](uint32_t, uint32_t) { return 100.0f; }));
  b.AddRail(1, 1 << 20, Names(4), AllPairs(4, [](uint32_t, uint32_t) { return 70.0f; }));
  v1::RegressionReport r = b.Finish();
  ASSERT_EQ(r.regressions_size(), 1) << r.summary();
  EXPECT_EQ(r.regressions(0).kind(), v1::REGRESSION_KIND_RAIL);
  EXPECT_EQ(r.regressions(0).subject(), "rail 1");
  EXPECT_DOUBLE_EQ(r.regressions(0).after_gbps(), 70);
}

TEST(RegressionBuilder, KeepsTheWorstLinksAndCountsTheRest) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.05, /*max_links=*/2);
  // Three separate slow links of 16 nodes, each a different drop.
  b.AddRail(0, 1 << 20, Names(16), AllPairs(16, [](uint32_t i, uint32_t j) {
              if (i == 0 && j == 1) return 80.0f;
              if (i == 2 && j == 3) return 50.0f;
              if (i == 4 && j == 5) return 70.0f;
              return 100.0f;
            }));
  v1::RegressionReport r = b.Finish();
  ASSERT_EQ(r.regressions_size(), 2);
  EXPECT_EQ(r.regressions(0).subject(), "n2->n3");
  EXPECT_EQ(r.regressions(1).subject(), "n4->n5");
  EXPECT_EQ(r.links_omitted(), 1u);
}

TEST(RegressionBuilder, WithinToleranceIsNothing) {
  RegressionBuilder b(v1::REGRESSION_REFERENCE_BASELINE, "base", 0.3);
  b.AddRail(0, 1 << 20, Names(4), AllPairs(4, [](uint32_t i, uint32_t) { return i == 0 ? 75.0f : 110.0f; }));
  v1::RegressionReport r = b.Finish();
  EXPECT_EQ(r.regressions_size(), 0);
  EXPECT_EQ(r.regressed_cells(), 0u);
}

}  // namespace
}  // namespace gdrbench::server::history
