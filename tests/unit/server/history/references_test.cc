// The references a sweep asks for before it uploads (server/history/references.h):
// what ingest would judge each link by, checked against what ingest then finds; and a
// finding on a retested cell "confirmed by a retest". Runs from the controller's own sweep of
// a fake cluster (fake_run.h), stored in SQLite.
#include "server/history/references.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/history/export.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {
namespace {

using testing::FakeRun;
using testing::FakeRunSpec;

class References : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::OpenTestStore(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  v1::UploadRunResponse Store(const v1::Run& run) {
    auto r = history::StoreRun(*store_, run, options_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : v1::UploadRunResponse();
  }
  v1::LinkReferences Refs(uint64_t size = 1 << 20) {
    v1::GetLinkReferencesRequest req;
    req.set_cluster("lab");
    req.set_size_bytes(size);
    auto r = history::FindLinkReferences(*store_, req, options_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::LinkReferences();
  }
  // Night `day`: node0 -> node1 wobbles by up to 4 %, node2 -> node3 reads `node23` x its rate.
  static FakeRunSpec Night(const std::string& id, int day, double node23) {
    static const double kPattern[] = {-1, 1, -0.5, 0.5, 0, 0.8, -0.8};
    FakeRunSpec s;
    s.run_id = id;
    s.started_unix_s = 1767225600 + day * 86400;
    s.model = [day, node23](uint32_t a, uint32_t b, const std::string& n) {
      if (a == 0 && b == 1) return 380 * (1 + 0.04 * kPattern[day % 7]);
      const double v = testing::DefaultModel(a, b, n);
      return a == 2 && b == 3 ? v * node23 : v;
    };
    return s;
  }
  std::unique_ptr<store::Store> store_;
  history::IngestOptions options_;
};

TEST_F(References, AnEmptyClusterHasNoneAndSaysSo) {
  v1::LinkReferences r = Refs();
  EXPECT_EQ(r.links_size(), 0);
  EXPECT_EQ(r.cluster(), "lab");
  EXPECT_EQ(r.summary(),
            "no baseline and no link with 5 or more runs of history: nothing to judge regressions by");
}

TEST_F(References, TheBaselineRunsReadingsWithTheTolerance) {
  v1::Run base = FakeRun(Night("base", 0, 1));
  Store(base);
  auto row = store_->FindRun("base");
  ASSERT_TRUE(row.ok() && *row);
  ASSERT_TRUE(store_->SetBaseline("lab", (*row)->key, "test").ok());
  v1::LinkReferences r = Refs();
  EXPECT_EQ(r.baseline_run_id(), "base");
  ASSERT_EQ(r.links_size(), 12);
  std::map<std::pair<std::string, std::string>, double> stored;
  for (const auto& m : base.matrices()) {
    if (m.size_bytes() != (1u << 20)) continue;
    for (const auto& c : m.cells()) stored[{m.nodes(c.src()), m.nodes(c.dst())}] = c.bw_avg_gbps();
  }
  for (const auto& l : r.links()) {
    EXPECT_NEAR(l.baseline_gbps(), (stored[{l.src(), l.dst()}]), 1e-3) << l.src() << "->" << l.dst();
    EXPECT_DOUBLE_EQ(l.baseline_threshold(), 0.05);
    EXPECT_EQ(l.history_gbps(), 0) << "one run is no history";
    EXPECT_EQ(l.history_runs(), 1u);
  }
  EXPECT_EQ(r.summary(), "baseline run base (12 links)");
  EXPECT_EQ(Refs(4096).links_size(), 0) << "a size the baseline did not measure";
}

// After 7 nights, the references predict exactly what ingest then finds: node2 -> node3 10 %
// down regresses (past the 5 % tolerance), node0 -> node1 10 % down does not (its own noise
// sets its threshold).
TEST_F(References, HistoryReferencesAreWhatIngestJudgesBy) {
  for (int d = 0; d < 7; ++d) Store(FakeRun(Night("n" + std::to_string(d), d, 1)));
  v1::LinkReferences r = Refs();
  ASSERT_EQ(r.links_size(), 12);
  EXPECT_EQ(r.summary(), "history (12 links with 5 or more runs)");
  v1::Run shaped = FakeRun(Night("shaped", 7, 0.9));
  for (auto& m : *shaped.mutable_matrices()) {
    if (m.size_bytes() != (1u << 20)) continue;
    for (auto& c : *m.mutable_cells()) {
      if (m.nodes(c.src()) == "node0" && m.nodes(c.dst()) == "node1") c.set_bw_avg_gbps(0.9 * 380);
    }
  }
  std::map<std::pair<std::string, std::string>, const v1::LinkReference*> by_link;
  for (const auto& l : r.links()) by_link[{l.src(), l.dst()}] = &l;
  std::vector<std::string> predicted;
  for (const auto& m : shaped.matrices()) {
    if (m.size_bytes() != (1u << 20)) continue;
    for (const auto& c : m.cells()) {
      const v1::LinkReference* l = by_link[{m.nodes(c.src()), m.nodes(c.dst())}];
      ASSERT_NE(l, nullptr);
      EXPECT_EQ(l->history_runs(), 7u);
      if (c.bw_avg_gbps() < (1 - l->history_threshold()) * l->history_gbps()) {
        predicted.push_back(m.nodes(c.src()) + "->" + m.nodes(c.dst()));
      }
    }
  }
  EXPECT_THAT(predicted, ::testing::ElementsAre("node2->node3"));
  const v1::LinkReference* wobbly = by_link[{"node0", "node1"}];
  EXPECT_GT(wobbly->history_threshold(), 0.1);
  v1::UploadRunResponse resp = Store(shaped);
  ASSERT_EQ(resp.regressions_size(), 2);
  const auto& h = resp.regressions(1);
  ASSERT_EQ(h.regressions_size(), 1) << h.summary();
  EXPECT_EQ(h.regressions(0).subject(), "node2->node3");
}

TEST_F(References, ABadClusterNameIsRefused) {
  v1::GetLinkReferencesRequest req;
  req.set_cluster("no spaces");
  auto r = history::FindLinkReferences(*store_, req, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// Ingest reads MatrixCell.retested: the same regressed cell is "confirmed by a retest" when the
// sweep measured it again, "seen once" when it did not.
TEST_F(References, AFindingOnARetestedCellIsConfirmed) {
  for (int d = 0; d < 7; ++d) Store(FakeRun(Night("n" + std::to_string(d), d, 1)));
  for (bool retested : {false, true}) {
    v1::Run run = FakeRun(Night(retested ? "twice" : "once", retested ? 8 : 7, 0.5));
    for (auto& m : *run.mutable_matrices()) {
      for (auto& c : *m.mutable_cells()) {
        if (m.nodes(c.src()) == "node2" && m.nodes(c.dst()) == "node3") c.set_retested(retested);
      }
    }
    v1::UploadRunResponse resp = Store(run);
    ASSERT_EQ(resp.regressions_size(), 2);
    const auto& h = resp.regressions(1);
    ASSERT_EQ(h.regressions_size(), 1) << h.summary();
    EXPECT_EQ(h.regressions(0).confirmed(), retested);
    EXPECT_THAT(h.regressions(0).reason(),
                ::testing::EndsWith(retested ? "; confirmed by a retest" : "; seen once"));
  }
}

}  // namespace
}  // namespace gdrbench::server
