// Capacity statistics at ingest (server/history/capacity.h) and the report
// over a period (capacity_report.h), on runs made by the controller's own
// sweep of its fake cluster (fake_run.h), stored in a real SQLite store.
#include "server/history/capacity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "report/capacity_report.h"
#include "server/history/capacity_report.h"
#include "server/history/export.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server::history {
namespace {

using ::testing::HasSubstr;

TEST(CapacityHistogram, BinsAreOnePercentWideAndQuantilesWithinOnePercent) {
  EXPECT_EQ(HistBin(0), 0u);
  EXPECT_EQ(HistBin(-3), 0u);
  EXPECT_EQ(HistBin(1e9), kHistBins - 1);
  for (double v : {0.4, 12.5, 100.0, 376.0, 399.9, 800.0}) {
    const uint32_t b = HistBin(v);
    EXPECT_LE(HistBinLow(b), v * (1 + 1e-12)) << v;
    EXPECT_GT(HistBinLow(b + 1), v) << v;
    EXPECT_NEAR(HistBinLow(b + 1) / HistBinLow(b), kHistStep, 1e-9);
  }
  // 100 values 301..400: p5 = 305, median = 350, within 1 %.
  std::map<uint32_t, uint64_t> h;
  for (int v = 301; v <= 400; ++v) ++h[HistBin(v)];
  std::vector<uint32_t> bins;
  std::vector<uint64_t> counts;
  for (auto [b, c] : h) {
    bins.push_back(b);
    counts.push_back(c);
  }
  EXPECT_NEAR(HistQuantile(bins, counts, 0.05, 301, 400), 305, 305 * 0.01);
  EXPECT_NEAR(HistQuantile(bins, counts, 0.5, 301, 400), 350, 350 * 0.01);
  EXPECT_EQ(HistQuantile(bins, counts, 0, 301, 400), std::clamp(HistQuantile(bins, counts, 0, 301, 400), 301.0, 400.0));
  EXPECT_EQ(HistQuantile({}, {}, 0.5, 0, 0), 0);
}

RailLabels TwoLeaves(size_t n) {
  RailLabels l;
  for (size_t i = 0; i < n; ++i) {
    l.leaf.push_back(i < n / 2 ? "L1" : "L2");
    l.spine_group.push_back("S");
  }
  l.any = true;
  return l;
}

const v1::CapacityStats* Group(const v1::RunCapacity& c, const std::string& name) {
  for (const auto& g : c.groups()) {
    if (g.group() == name) return &g;
  }
  return nullptr;
}

TEST(CapacityBuilder, GroupsCellsByLeafAndKeepsTheWeakest) {
  std::vector<std::string> names = {"a", "b", "c", "d"};
  CapacityBuilder b(0, 1 << 20, names, TwoLeaves(4), 2);
  for (uint32_t s = 0; s < 4; ++s) {
    for (uint32_t d = 0; d < 4; ++d) {
      if (s == d) continue;
      const double gbps = (s == 0 && d == 3) ? 100 : (s == 1 && d == 2) ? 200 : 380;
      b.Add(s, d, v1::RESULT_STATUS_OK, gbps, 400);
    }
  }
  b.Add(2, 3, v1::RESULT_STATUS_ERROR, 0, 400);  // replaces nothing: a failed cell counts as failed
  v1::RunCapacity out;
  b.Finish(&out);
  const auto* all = Group(out, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->ok_cells(), 12u);
  EXPECT_EQ(all->failed_cells(), 1u);
  EXPECT_EQ(all->min_gbps(), 100);
  EXPECT_EQ(all->max_gbps(), 380);
  EXPECT_EQ(all->link_gbps(), 400);
  EXPECT_EQ(all->size_bytes(), 1u << 20);
  // a,b on L1; c,d on L2: intra-leaf a<->b, c<->d (4 cells), cross-leaf the other 8.
  EXPECT_EQ(Group(out, "intra-leaf")->ok_cells(), 4u);
  EXPECT_EQ(Group(out, "cross-leaf")->ok_cells(), 8u);
  EXPECT_EQ(Group(out, "cross-leaf")->min_gbps(), 100);
  EXPECT_EQ(Group(out, "intra-leaf")->min_gbps(), 380);
  EXPECT_EQ(Group(out, "leaf L1")->ok_cells(), 2u);
  EXPECT_EQ(Group(out, "leaf L1 uplinks")->ok_cells(), 4u);
  EXPECT_EQ(Group(out, "leaf L2 uplinks")->failed_cells(), 0u);
  EXPECT_EQ(Group(out, "spine group S")->ok_cells(), 8u);
  EXPECT_EQ(Group(out, "cross-spine-group"), nullptr);
  ASSERT_EQ(out.weakest_size(), 2);
  EXPECT_EQ(out.weakest(0).src(), "a");
  EXPECT_EQ(out.weakest(0).dst(), "d");
  EXPECT_EQ(out.weakest(0).src_leaf(), "L1");
  EXPECT_EQ(out.weakest(0).dst_leaf(), "L2");
  EXPECT_EQ(out.weakest(1).src(), "b");
}

TEST(CapacityBuilder, WithoutLabelsOnlyTheRail) {
  CapacityBuilder b(3, 65536, {"a", "b"}, RailLabels{}, 8);
  b.Add(0, 1, v1::RESULT_STATUS_OK, 10, 0);
  b.Add(1, 0, v1::RESULT_STATUS_OK, 20, 0);
  v1::RunCapacity out;
  b.Finish(&out);
  ASSERT_EQ(out.groups_size(), 1);
  EXPECT_EQ(out.groups(0).group(), "all");
  EXPECT_EQ(out.groups(0).rail(), 3u);
  EXPECT_EQ(out.groups(0).link_gbps(), 0);
  EXPECT_EQ(out.weakest(0).gbps(), 10);  // by Gb/s when the link rate is unknown
}

TEST(CapacityLabels, FromTheRunsTopologyPerRail) {
  v1::Run run;
  auto* t = run.add_topology();
  t->set_node("b");
  auto* r0 = t->add_rails();
  r0->set_rail(0);
  r0->set_leaf("L0");
  auto* r1 = t->add_rails();
  r1->set_rail(1);
  r1->set_leaf("L9");
  r1->set_spine_group("P1");
  RailLabels l = LabelsOf(run, 1, {"a", "b"});
  EXPECT_TRUE(l.any);
  EXPECT_EQ(l.leaf, (std::vector<std::string>{"", "L9"}));
  EXPECT_EQ(l.spine_group[1], "P1");
  EXPECT_FALSE(LabelsOf(v1::Run{}, 0, {"a"}).any);
}

// A 30-day history of an 8-node, 2-rail, 2-leaf fabric whose node1<->node6
// link on rail 0 fades from 96 % to 60 % of 400 Gb/s.
class CapacityReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::OpenTestStore("capacity");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    for (int k = 0; k < 30; ++k) {
      testing::FakeRunSpec spec;
      spec.nodes = 8;
      spec.rails = 2;
      spec.sizes = {1 << 20};
      spec.run_id = "fab-" + std::to_string(100 + k);
      spec.cluster = "fab";
      spec.started_unix_s = kEnd - (29 - k) * 86400;
      const double frac = 0.96 - 0.36 * k / 29.0;
      spec.model = [frac](uint32_t s, uint32_t d, const std::string& nic) {
        if (nic == "nic0" && ((s == 1 && d == 6) || (s == 6 && d == 1))) return frac * 400;
        return testing::DefaultModel(s, d, nic);
      };
      v1::Run run = testing::FakeRun(spec);
      for (uint32_t i = 0; i < 8; ++i) {
        auto* t = run.add_topology();
        t->set_node("node" + std::to_string(i));
        for (uint32_t r = 0; r < 2; ++r) {
          auto* rt = t->add_rails();
          rt->set_rail(r);
          rt->set_leaf((i < 4 ? "su1-leaf" : "su2-leaf") + std::to_string(r));
        }
      }
      auto st = StoreRun(*store_, run, {});
      ASSERT_TRUE(st.ok()) << st.status();
    }
  }
  static constexpr int64_t kEnd = 1767225600;  // 2026-01-01
  std::unique_ptr<store::Store> store_;
};

TEST_F(CapacityReportTest, TheDegradingLinkShowsInTheTrendAndIsTheWeakest) {
  CapacityOptions o;
  o.days = 30;
  o.now_us = (kEnd + 3600) * 1000000;
  auto r = BuildCapacityReport(*store_, "fab", o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->runs(), 30u);
  EXPECT_TRUE(r->topology_labelled());
  EXPECT_DOUBLE_EQ(r->acceptance_fraction(), 0.9);
  const v1::CapacityGroup* all0 = nullptr;
  const v1::CapacityGroup* cross0 = nullptr;
  const v1::CapacityGroup* intra0 = nullptr;
  for (const auto& g : r->groups()) {
    if (g.rail() == 0 && g.group() == "all") all0 = &g;
    if (g.rail() == 0 && g.group() == "cross-leaf") cross0 = &g;
    if (g.rail() == 0 && g.group() == "intra-leaf") intra0 = &g;
  }
  ASSERT_TRUE(all0 && cross0 && intra0);
  EXPECT_EQ(r->groups(0).group(), "all");  // per rail, "all" first
  EXPECT_EQ(all0->trend_size(), 30);
  EXPECT_EQ(all0->ok_cells(), 30u * 56);
  // The healthy cells span 376..387 Gb/s (DefaultModel): the fading link
  // (384 Gb/s in the first run) is the rail's minimum from the fourth run on.
  EXPECT_NEAR(all0->trend(0).min_gbps(), 376, 0.5);
  EXPECT_NEAR(all0->trend(29).min_gbps(), 0.60 * 400, 1);
  EXPECT_NEAR(all0->min_change_fraction(), 0.60 * 400 / 376 - 1, 0.01);
  EXPECT_NEAR(cross0->min_change_fraction(), 0.60 * 400 / 376 - 1, 0.01);
  EXPECT_NEAR(intra0->min_change_fraction(), 0, 0.05);  // the link is cross-leaf
  EXPECT_NEAR(all0->median_gbps(), 381.5, 381.5 * 0.01);
  EXPECT_NEAR(all0->median_fraction(), 381.5 / 400, 0.01);
  EXPECT_GT(all0->p5_margin_fraction(), 0);  // p5 still above the 90 % line
  ASSERT_GE(r->weakest_size(), 2);
  const auto& w = r->weakest(0);
  EXPECT_EQ(w.rail(), 0u);
  EXPECT_EQ(std::set<std::string>({w.src(), w.dst()}), (std::set<std::string>{"node1", "node6"}));
  EXPECT_EQ(std::set<std::string>({w.src_leaf(), w.dst_leaf()}), (std::set<std::string>{"su1-leaf0", "su2-leaf0"}));
  EXPECT_NEAR(w.latest_fraction(), 0.60, 0.01);
  EXPECT_NEAR(w.change_fraction(), 0.60 / 0.96 - 1, 0.01);
  EXPECT_EQ(w.trend_size(), 30);
  // Among each run's 32 weakest of 56 cells from the second run on (at 384
  // Gb/s in the first, 38 healthy cells are slower).
  EXPECT_EQ(w.runs_weakest(), 29u);
  EXPECT_THAT(r->summary(), HasSubstr("30 runs over 30 days"));
  EXPECT_THAT(r->summary(), HasSubstr("weakest node"));

  // The same report as text and CSV (report/capacity_report.h).
  const std::string text = report::RenderCapacityText(*r);
  EXPECT_THAT(text, HasSubstr("capacity of cluster fab, the last 30 days"));
  EXPECT_THAT(text, HasSubstr("cross-leaf"));
  EXPECT_THAT(text, HasSubstr("weakest links"));
  const std::string csv = report::RenderCapacityCsv(*r);
  EXPECT_THAT(csv, HasSubstr("fab,30,30,0,all,1680,0,400,"));
  EXPECT_THAT(csv, HasSubstr("\nrail,src,dst,src_leaf,dst_leaf,"));

  // A shorter period: fewer runs, a smaller decline.
  o.days = 10;
  auto r10 = BuildCapacityReport(*store_, "fab", o);
  ASSERT_TRUE(r10.ok());
  EXPECT_EQ(r10->runs(), 10u);
  EXPECT_GT(r10->weakest(0).change_fraction(), w.change_fraction());
}

TEST_F(CapacityReportTest, BadArgumentsAndUnknownClusters) {
  CapacityOptions o;
  o.days = 0;
  EXPECT_EQ(BuildCapacityReport(*store_, "fab", o).status().code(), absl::StatusCode::kInvalidArgument);
  o.days = 30;
  o.now_us = (kEnd + 3600) * 1000000;
  auto none = BuildCapacityReport(*store_, "other", o);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->runs(), 0u);
  EXPECT_THAT(none->summary(), HasSubstr("no run of other"));
}

}  // namespace
}  // namespace gdrbench::server::history
