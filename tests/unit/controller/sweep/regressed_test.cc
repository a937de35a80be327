// Issue 29, confirmation before blame for regressions: the cells that read
// regressed against gdrbench-server's references are found with partners
// that separate the link from its ends (regressed.h), and the sweep measures
// them again in its first retest pass, marking them retested in the run, so
// the server's finding says "confirmed by a retest", or the retest clears it.
#include "controller/sweep/regressed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>

#include "controller/analysis/verdicts.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::sweep {
namespace {

using Link = std::pair<uint32_t, uint32_t>;

v1::PairResult Result(uint32_t src, uint32_t dst, double gbps) {
  v1::PairResult r;
  r.mutable_src()->set_node("node" + std::to_string(src));
  r.mutable_dst()->set_node("node" + std::to_string(dst));
  r.set_status(v1::RESULT_STATUS_OK);
  r.set_expected_gbps(100);
  auto* s = r.add_sizes();
  s->set_size_bytes(65536);
  s->set_bw_avg_gbps(gbps);
  s->set_status(v1::RESULT_STATUS_OK);
  return r;
}

std::vector<std::string> Names(uint32_t n) {
  std::vector<std::string> names;
  for (uint32_t i = 0; i < n; ++i) names.push_back("node" + std::to_string(i));
  return names;
}

// All pairs of `n` nodes at 95 Gb/s but those in `gbps`, judged (fleet and absolute).
analysis::MatrixSet Judged(uint32_t n, const std::map<Link, double>& gbps) {
  analysis::MatrixSet set(Names(n));
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      auto it = gbps.find({s, d});
      set.Add(Result(s, d, it == gbps.end() ? 95 : it->second));
    }
  }
  analysis::Judge(set, analysis::DefaultPolicy(), nullptr, {});
  return set;
}

// Every link of `n` nodes with the history median `median` and threshold `threshold`.
v1::LinkReferences History(uint32_t n, double median, double threshold) {
  v1::LinkReferences r;
  r.set_size_bytes(65536);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      v1::LinkReference* l = r.add_links();
      l->set_src("node" + std::to_string(s));
      l->set_dst("node" + std::to_string(d));
      l->set_history_gbps(median);
      l->set_history_threshold(threshold);
      l->set_history_runs(5);
    }
  }
  return r;
}

std::vector<Link> Links(const std::vector<CellRef>& cells) {
  std::vector<Link> out;
  for (const auto& c : cells) out.push_back({c.src, c.dst});
  return out;
}

RegressedCells Find(const analysis::MatrixSet& set, const ReferenceMap& refs) {
  return FindRegressed(set.VerdictMatrices(), set.nodes(), refs);
}

TEST(Regressed, ACellPastItsThresholdIsFoundWithAPartnerOfEachEnd) {
  // 91 Gb/s passes against the fleet (4 % below its median) but is 4.2 % below its history's 95.
  analysis::MatrixSet set = Judged(4, {{{1, 2}, 91}});
  auto found = Find(set, {{{0, 65536}, History(4, 95, 0.03)}});
  EXPECT_THAT(Links(found.regressed), ::testing::ElementsAre(Link{1, 2}));
  // node1 with the first node after it but node2 (node3); node2 with the first after it (node3).
  EXPECT_THAT(Links(found.partners), ::testing::ElementsAre(Link{1, 3}, Link{3, 2}));
}

TEST(Regressed, ACellWithinItsThresholdIsNot) {
  analysis::MatrixSet set = Judged(4, {{{1, 2}, 93}});  // 2.1 % below 95, threshold 3 %
  auto found = Find(set, {{{0, 65536}, History(4, 95, 0.03)}});
  EXPECT_TRUE(found.regressed.empty());
  EXPECT_TRUE(found.partners.empty());
}

TEST(Regressed, ALowCellIsLeftToTheOutlierRetest) {
  analysis::MatrixSet set = Judged(4, {{{1, 2}, 40}});
  ASSERT_EQ(set.VerdictMatrices()[0]->at(1, 2).verdict, analysis::Verdict::kLow);
  auto found = Find(set, {{{0, 65536}, History(4, 95, 0.03)}});
  EXPECT_TRUE(found.regressed.empty());
}

TEST(Regressed, BothReferencesCountAndAnUnknownNodeOrMatrixIsIgnored) {
  analysis::MatrixSet set = Judged(4, {{{1, 2}, 91}, {{2, 1}, 91}});
  v1::LinkReferences r;
  auto add = [&](const std::string& s, const std::string& d, double base, double hist) {
    v1::LinkReference* l = r.add_links();
    l->set_src(s);
    l->set_dst(d);
    l->set_baseline_gbps(base);
    l->set_baseline_threshold(0.05);
    l->set_history_gbps(hist);
    l->set_history_threshold(0.05);
  };
  add("node1", "node2", 100, 0);  // the baseline's 100: 9 % below
  add("node2", "node1", 0, 100);  // its history's 100
  add("node1", "node9", 100, 100);
  auto found = Find(set, {{{0, 65536}, r}, {{0, 1048576}, History(4, 1000, 0)}});
  EXPECT_THAT(Links(found.regressed), ::testing::ElementsAre(Link{1, 2}, Link{2, 1}));
  EXPECT_TRUE(Find(set, {}).regressed.empty()) << "no references: nothing regressed";
}

TEST(Regressed, APartnerIsNeverARegressedOrLowCell) {
  // node1->node3 regressed too and node3->node2 is low: the partners move on to node0.
  analysis::MatrixSet set = Judged(4, {{{1, 2}, 91}, {{1, 3}, 91}, {{3, 2}, 40}});
  auto found = Find(set, {{{0, 65536}, History(4, 95, 0.03)}});
  EXPECT_THAT(Links(found.regressed), ::testing::ElementsAre(Link{1, 2}, Link{1, 3}));
  // 1->2: 1->0 and 0->2; 1->3: 1->0 and 0->3 (3->2 low, 1->2 regressed).
  EXPECT_THAT(Links(found.partners), ::testing::ElementsAre(Link{0, 2}, Link{0, 3}, Link{1, 0}));
}

TEST(Regressed, TwoNodesHaveNoPartner) {
  analysis::MatrixSet set = Judged(2, {{{0, 1}, 91}});
  auto found = Find(set, {{{0, 65536}, History(2, 95, 0.03)}});
  EXPECT_THAT(Links(found.regressed), ::testing::ElementsAre(Link{0, 1}));
  EXPECT_TRUE(found.partners.empty());
}

// The sweep, against fake agents and a stand-in for the server's references.
SweepConfig Config(run::FakeCluster& cluster) {
  SweepConfig c;
  c.inventory.source = "test";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.parallel = 4;
  c.retries = 0;
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  return c;
}

const v1::MatrixCell& CellOf(const v1::Run& run, uint32_t src, uint32_t dst) {
  for (const auto& c : run.matrices(0).cells()) {
    if (c.src() == src && c.dst() == dst) return c;
  }
  static const v1::MatrixCell none;
  return none;
}

struct Served {
  int calls = 0;
};

void ServeHistory(SweepConfig& c, Served& served) {
  c.link_references = [&served](uint32_t rail, uint64_t size) -> absl::StatusOr<v1::LinkReferences> {
    ++served.calls;
    EXPECT_EQ(rail, 0u);
    EXPECT_EQ(size, 65536u);
    v1::LinkReferences r = History(4, 95, 0.03);
    r.set_summary("every link's history");
    return r;
  };
}

TEST(RegressionRetest, ARetestThatReadsFineClearsTheCell) {
  run::FakeCluster cluster(4, 1, 100);
  std::atomic<int> slow_left{1};
  cluster.SetBandwidth([&](uint32_t s, uint32_t d, const std::string&) {
    return s == 1 && d == 2 && slow_left.fetch_sub(1) > 0 ? 91.0 : 95.0;
  });
  SweepConfig c = Config(cluster);
  Served served;
  ServeHistory(c, served);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(served.calls, 1);
  EXPECT_TRUE(run->passed()) << run->summary();
  ASSERT_EQ(run->pairs_size(), 15);  // 12 tests, the regressed cell and its two partners again
  std::set<Link> again;
  for (int i = 12; i < 15; ++i)
    again.insert({run->pairs(i).src().node().back() - '0', run->pairs(i).dst().node().back() - '0'});
  EXPECT_EQ(again, (std::set<Link>{{1, 2}, {1, 3}, {3, 2}}));
  EXPECT_TRUE(CellOf(*run, 1, 2).retested());
  EXPECT_DOUBLE_EQ(CellOf(*run, 1, 2).bw_avg_gbps(), 95);  // the retest's reading
  EXPECT_FALSE(CellOf(*run, 1, 3).retested()) << "a partner read fine the first time";
  EXPECT_FALSE(CellOf(*run, 0, 1).retested());
}

TEST(RegressionRetest, ARetestThatStillReadsRegressedKeepsItMarked) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetBandwidth(
      [](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 91.0 : 95.0; });
  SweepConfig c = Config(cluster);
  Served served;
  ServeHistory(c, served);
  std::vector<std::string> notes;
  SweepHooks h;
  h.on_note = [&](const std::string& line) { notes.push_back(line); };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pairs_size(), 15);
  EXPECT_THAT(notes,
              ::testing::ElementsAre(
                  "regressions: rail 0 size 65536 B: every link's history",
                  "regressions: 1 cell(s) regressed against them: retested with 2 partner test(s) that "
                  "separate each link from its ends"));
  EXPECT_TRUE(CellOf(*run, 1, 2).retested());
  EXPECT_DOUBLE_EQ(CellOf(*run, 1, 2).bw_avg_gbps(), 91);
  EXPECT_EQ(served.calls, 1) << "references are asked once, regressed cells retested once";
}

TEST(RegressionRetest, NoServerNoRetestOfRegressions) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetBandwidth(
      [](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 91.0 : 95.0; });
  SweepConfig c = Config(cluster);
  std::vector<std::string> notes;
  SweepHooks h;
  h.on_note = [&](const std::string& line) { notes.push_back(line); };
  auto run = RunSweep(c, h);  // no link_references: nothing to judge regressions by
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pairs_size(), 12);
  EXPECT_FALSE(CellOf(*run, 1, 2).retested());
  EXPECT_THAT(notes, ::testing::ElementsAre(::testing::StartsWith(
                         "regressions: no server to ask for each link's baseline and history (--server)")));
}

TEST(RegressionRetest, AServerThatCannotAnswerLeavesTheCellsSeenOnce) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetBandwidth(
      [](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 91.0 : 95.0; });
  SweepConfig c = Config(cluster);
  c.link_references = [](uint32_t, uint64_t) -> absl::StatusOr<v1::LinkReferences> {
    return absl::UnavailableError("GetLinkReferences on s:1: connection refused");
  };
  std::vector<std::string> notes;
  SweepHooks h;
  h.on_note = [&](const std::string& line) { notes.push_back(line); };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pairs_size(), 12);
  EXPECT_FALSE(CellOf(*run, 1, 2).retested());
  EXPECT_THAT(notes,
              ::testing::ElementsAre(
                  "regressions: rail 0 size 65536 B: cannot read the server's references (GetLinkReferences "
                  "on s:1: connection refused): its regressed cells are not retested"));
}

TEST(RegressionRetest, RetestsOffMeansNoReferenceIsAsked) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetBandwidth(
      [](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 91.0 : 95.0; });
  SweepConfig c = Config(cluster);
  c.retest_low = 0;
  Served served;
  ServeHistory(c, served);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(served.calls, 0);
  EXPECT_EQ(run->pairs_size(), 12);
}

}  // namespace
}  // namespace gdrbench::controller::sweep
