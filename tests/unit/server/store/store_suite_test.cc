// The store suite: the same tests on SQLite (unit) and PostgreSQL
// (integration); see store_suite.h. Runs come from the controller's own
// sweep of a fake cluster (fake_run.h).
#include <algorithm>
#include <set>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/history/export.h"
#include "server/history/ingest.h"
#include "server/store/migrations.h"
#include "tests/unit/server/store/store_suite_fixture.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {
namespace {

using ::testing::HasSubstr;
using testing::FakeRun;
using testing::FakeRunSpec;


TEST_F(StoreSuite, MigratesOnceAndReopensAtTheLatestVersion) {
  auto again = testing::ReopenTestStore(name_);
  ASSERT_TRUE(again.ok()) << again.status();
  auto runs = (*again)->ListRuns({});
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(runs->empty());
  EXPECT_GE(store::LatestSchemaVersion(), 1);
}

TEST_F(StoreSuite, KeepsARunWholeInPieces) {
  v1::Run run = FakeRun(Spec("r1", 0));
  v1::UploadRunResponse resp = Store(run);
  EXPECT_FALSE(resp.already_stored());
  EXPECT_EQ(resp.cells(), 24u);  // 12 ordered pairs x 2 sizes
  EXPECT_EQ(resp.pairs(), 12u);
  auto row = store_->FindRun("r1");
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->cluster, "lab");
  EXPECT_EQ((*row)->nodes, 4u);
  EXPECT_EQ((*row)->cells, 24u);
  EXPECT_TRUE((*row)->passed);
  auto whole = history::AssembleRun(*store_, **row, 1000);
  ASSERT_TRUE(whole.ok()) << whole.status();
  // Everything but the server's own additions (regressions) reads back equal.
  v1::Run back = *whole;
  back.clear_regressions();
  EXPECT_EQ(back.SerializeAsString(), run.SerializeAsString());
  EXPECT_EQ(whole->regressions_size(), 2);
}

TEST_F(StoreSuite, UploadIsIdempotentByRunId) {
  v1::Run run = FakeRun(Spec("r1", 0));
  Store(run);
  v1::UploadRunResponse again = Store(run);
  EXPECT_TRUE(again.already_stored());
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 1u);
}

// Issue 31: a reused run id with other content was answered "already
// stored" and dropped without a word.
TEST_F(StoreSuite, AReusedRunIdWithOtherContentIsRefused) {
  v1::Run first = FakeRun(Spec("r1", 0));
  Store(first);
  auto row = store_->FindRun("r1");
  ASSERT_TRUE(row.ok() && row->has_value());
  const std::string when = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMicros((*row)->stored_us),
                                            absl::UTCTimeZone());
  v1::Run other = FakeRun(Spec("r1", 1));  // the next night's run under the same id
  auto r = history::StoreRun(*store_, other, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("run r1 was stored at " + when + " with other content"));
  // The same header with fewer cells: refused once the cells are counted.
  v1::Run fewer = first;
  fewer.mutable_matrices(0)->mutable_cells()->RemoveLast();
  r = history::StoreRun(*store_, fewer, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("(23 cells and 12 pairs; it has 24 and 12)"));
  // The same run again is still idempotent.
  v1::UploadRunResponse again = Store(first);
  EXPECT_TRUE(again.already_stored());
  EXPECT_EQ(again.cells(), 24u);
  auto header = store_->ReadHeader((*row)->key);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(store::ToMicros(header->started_at()), store::ToMicros(first.started_at()));
}

TEST_F(StoreSuite, MalformedUploadChangesNothing) {
  v1::Run run = FakeRun(Spec("bad", 0));
  run.mutable_matrices(1)->mutable_cells(3)->set_dst(99);  // past the 4 nodes
  auto r = history::StoreRun(*store_, run, options_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not a node index of the matrix"));
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  // The same run, fixed, then stores (the failed one left no row behind).
  EXPECT_FALSE(Store(FakeRun(Spec("bad", 0))).already_stored());
}

TEST_F(StoreSuite, RefusesHeadersThatAreNotRuns) {
  v1::Run run = FakeRun(Spec("x", 0));
  for (auto mutate : std::vector<std::function<void(v1::Run*)>>{
           [](v1::Run* r) { r->set_run_id("has space"); },
           [](v1::Run* r) { r->clear_started_at(); },
           [](v1::Run* r) { r->mutable_matrices(0)->set_size_bytes(1ull << 41); },
           [](v1::Run* r) { r->mutable_matrices(0)->add_nodes("node0"); },
           [](v1::Run* r) { r->mutable_matrices(0)->mutable_cells(0)->set_bw_avg_gbps(-1); },
           [](v1::Run* r) { r->mutable_matrices(0)->mutable_cells(0)->set_verdict("great"); },
           [](v1::Run* r) { r->add_regressions(); },
           [](v1::Run* r) { r->clear_matrices(); },
       }) {
    v1::Run bad = run;
    mutate(&bad);
    auto r = history::StoreRun(*store_, bad, options_);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  }
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
}

// The store keys cells by one rail: a cross-rail lane (rail 0 -> 1) is
// refused with the reason rather than stored as rail 0.
TEST_F(StoreSuite, RefusesCrossRailRunsWithTheReason) {
  v1::Run run = FakeRun(Spec("xr", 0));
  run.set_mode("cross-rail");
  run.mutable_matrices(0)->set_dst_rail(run.matrices(0).rail() + 1);
  auto r = history::StoreRun(*store_, run, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("a --mode cross-rail matrix (rail 0 -> 1): the store keeps same-rail runs only"));
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  // dst_rail equal to the rail (present but the same) is a same-rail matrix.
  run.mutable_matrices(0)->set_dst_rail(run.matrices(0).rail());
  EXPECT_TRUE(history::StoreRun(*store_, run, options_).ok());
}

TEST_F(StoreSuite, ListsNewestFirstWithFiltersAndPages) {
  for (int d = 0; d < 5; ++d) Store(FakeRun(Spec("r" + std::to_string(d), d)));
  FakeRunSpec other = Spec("other", 9);
  other.cluster = "prod";
  Store(FakeRun(other));
  store::RunFilter f;
  f.cluster = "lab";
  f.limit = 2;
  auto p1 = store_->ListRuns(f);
  ASSERT_TRUE(p1.ok());
  ASSERT_EQ(p1->size(), 2u);
  EXPECT_EQ((*p1)[0].run_id, "r4");
  EXPECT_EQ((*p1)[1].run_id, "r3");
  f.after = {{(*p1)[1].started_us, (*p1)[1].key}};
  auto p2 = store_->ListRuns(f);
  ASSERT_TRUE(p2.ok());
  ASSERT_EQ(p2->size(), 2u);
  EXPECT_EQ((*p2)[0].run_id, "r2");
  store::RunFilter since;
  since.since_us = store::ToMicros(FakeRun(Spec("x", 3)).started_at());
  auto recent = store_->ListRuns(since);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ(recent->size(), 3u);  // r3, r4, other
  auto latest = store_->LatestRuns();
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 2u);
  EXPECT_EQ((*latest)[0].run_id, "r4");
  EXPECT_EQ((*latest)[1].run_id, "other");
}

TEST_F(StoreSuite, LinkAndNodeTrendsAcrossRuns) {
  for (int d = 0; d < 4; ++d) {
    FakeRunSpec s = Spec("r" + std::to_string(d), d);
    s.model = [d](uint32_t a, uint32_t b, const std::string& n) {
      return a == 1 && b == 2 ? 380.0 - 40 * d : testing::DefaultModel(a, b, n);
    };
    Store(FakeRun(s));
  }
  auto src = store_->NodeId("node1");
  auto dst = store_->NodeId("node2");
  ASSERT_TRUE(src.ok() && dst.ok());
  auto t = store_->LinkTrend("lab", *src, *dst, 0, 0, 0, 3);  // verdict size, last 3
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].run_id, "r3");
  EXPECT_NEAR((*t)[0].cell.bw_avg_gbps, 260, 1e-3);
  EXPECT_NEAR((*t)[2].cell.bw_avg_gbps, 340, 1e-3);
  EXPECT_EQ((*t)[0].cell.size_bytes, 1u << 20);
  auto small = store_->LinkTrend("lab", *src, *dst, 0, 65536, 0, 10);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->size(), 4u);
  auto nt = store_->NodeTrend("lab", *src, 0u, 0, 10);
  ASSERT_TRUE(nt.ok()) << nt.status();
  ASSERT_EQ(nt->size(), 4u);
  EXPECT_EQ((*nt)[0].stat.ok_cells, 6u);  // 3 partners, both directions
  EXPECT_GT((*nt)[0].stat.median_gbps, 370);
}

TEST_F(StoreSuite, RegressionsAgainstTheBaselineAndEachLinksHistory) {
  Store(FakeRun(Spec("base", 0)));
  auto base = store_->FindRun("base");
  ASSERT_TRUE(base.ok() && *base);
  ASSERT_TRUE(store_->SetBaseline("lab", (*base)->key, "test").ok());
  FakeRunSpec s = Spec("slow", 1);
  s.model = [](uint32_t a, uint32_t b, const std::string& n) {
    return a == 2 && b == 3 ? 200.0 : testing::DefaultModel(a, b, n);
  };
  v1::UploadRunResponse resp = Store(FakeRun(s));
  ASSERT_EQ(resp.regressions_size(), 2);
  const auto& bl_rep = resp.regressions(0);
  EXPECT_EQ(bl_rep.reference(), v1::REGRESSION_REFERENCE_BASELINE);
  EXPECT_EQ(bl_rep.reference_run_id(), "base");
  ASSERT_EQ(bl_rep.regressions_size(), 1) << bl_rep.summary();
  EXPECT_EQ(bl_rep.regressions(0).kind(), v1::REGRESSION_KIND_LINK);
  EXPECT_EQ(bl_rep.regressions(0).subject(), "node2->node3");
  EXPECT_EQ(bl_rep.regressions(0).reference_detail(), "the baseline run base");
  EXPECT_EQ(bl_rep.regressions(0).history_runs(), 1u);
  EXPECT_EQ(bl_rep.regressions(0).streak(), 1u);
  EXPECT_NEAR(bl_rep.regressions(0).after_gbps(), 200, 1e-3);
  EXPECT_EQ(bl_rep.compared_cells(), 12u);
  // One earlier run is no history to judge by.
  const auto& h_rep = resp.regressions(1);
  EXPECT_EQ(h_rep.reference(), v1::REGRESSION_REFERENCE_HISTORY);
  EXPECT_EQ(h_rep.regressions_size(), 0);
  EXPECT_EQ(h_rep.short_history_cells(), 12u);
  EXPECT_EQ(h_rep.summary(), "1 run of history: compared with the baseline only");
  auto bl = store_->GetBaseline("lab");
  ASSERT_TRUE(bl.ok() && *bl);
  EXPECT_EQ((*bl)->set_by, "test");
  auto row = store_->FindRun("slow");
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->baseline_regressions, 1u);
  EXPECT_EQ((*row)->last_pass_regressions, 0u);  // the history's count
  auto header = store_->ReadHeader((*row)->key);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->regressions_size(), 2);
}

// Node 0 -> 1 reads within +-4 % night to night (noise 4.7 %, threshold
// 14 %); every other link reads the same each night (threshold: the 5 %
// tolerance). The night's deviation of node0 -> node1 (day d < 7).
double Wobble(int day) {
  static const double kPattern[] = {-1, 1, -0.5, 0.5, 0, 0.8, -0.8};
  return 1 + 0.04 * kPattern[day % 7];
}

FakeRunSpec Nightly(FakeRunSpec s, int day, double node01, double node23) {
  s.model = [day, node01, node23](uint32_t a, uint32_t b, const std::string& n) {
    const double v = testing::DefaultModel(a, b, n);
    if (a == 0 && b == 1) return node01 > 0 ? 380 * node01 : 380 * Wobble(day);
    if (a == 2 && b == 3) return v * node23;
    return v;
  };
  return s;
}

TEST_F(StoreSuite, EachLinkIsJudgedByItsOwnNoise) {
  for (int d = 0; d < 7; ++d) {
    v1::UploadRunResponse r = Store(FakeRun(Nightly(Spec("n" + std::to_string(d), d), d, 0, 1)));
    ASSERT_EQ(r.regressions_size(), 2);
    EXPECT_EQ(r.regressions(1).regressions_size(), 0) << "night " << d << ": " << r.regressions(1).summary();
  }
  auto noise = store_->ReadLinkNoise("lab", 0, 1 << 20);
  ASSERT_TRUE(noise.ok()) << noise.status();
  ASSERT_TRUE(noise->has_value());
  // Both links 10 % down: node0 -> node1 within its noise, node2 -> node3 not.
  v1::UploadRunResponse r = Store(FakeRun(Nightly(Spec("shaped", 7), 7, 0.90, 0.90)));
  ASSERT_EQ(r.regressions_size(), 2);
  EXPECT_EQ(r.regressions(0).summary(), "no baseline is set: nothing compared");
  const auto& h = r.regressions(1);
  EXPECT_EQ(h.reference(), v1::REGRESSION_REFERENCE_HISTORY);
  EXPECT_EQ(h.short_history_cells(), 0u);
  EXPECT_EQ(h.compared_cells(), 12u);
  ASSERT_EQ(h.regressions_size(), 1) << h.summary();
  const auto& g = h.regressions(0);
  EXPECT_EQ(g.subject(), "node2->node3");
  EXPECT_EQ(g.reference_detail(), "its history (median of 7 runs)");
  EXPECT_NEAR(g.drop_fraction(), 0.10, 1e-3);
  EXPECT_NEAR(g.threshold_fraction(), 0.05, 1e-9);
  EXPECT_EQ(g.streak(), 1u);
}

TEST_F(StoreSuite, AFindingsStreakCountsConsecutiveRuns) {
  for (int d = 0; d < 6; ++d) Store(FakeRun(Nightly(Spec("n" + std::to_string(d), d), d, 0, 1)));
  auto streak = [&](const std::string& id, int day, double node23) -> int {
    v1::UploadRunResponse r = Store(FakeRun(Nightly(Spec(id, day), day, 0, node23)));
    if (r.regressions_size() != 2) return -1;
    const auto& h = r.regressions(1);
    if (h.regressions_size() == 0) return 0;
    EXPECT_EQ(h.regressions_size(), 1) << h.summary();
    EXPECT_EQ(h.regressions(0).subject(), "node2->node3");
    return static_cast<int>(h.regressions(0).streak());
  };
  EXPECT_EQ(streak("s1", 6, 0.5), 1);
  // The regressed readings did not enter its history: still judged the same.
  EXPECT_EQ(streak("s2", 7, 0.5), 2);
  EXPECT_EQ(streak("s3", 8, 0.5), 3);
  EXPECT_EQ(streak("ok", 9, 1), 0);
  EXPECT_EQ(streak("s4", 10, 0.5), 1);
}

TEST_F(StoreSuite, ABlamesStreakIsTheServersAndAReuploadIsStillTheSameRun) {
  auto shaped = [](const std::string& id, int day) {
    FakeRunSpec s = Spec(id, day);
    s.model = [](uint32_t a, uint32_t b, const std::string& n) {
      return a == 2 && b == 3 ? 150.0 : testing::DefaultModel(a, b, n);
    };
    return FakeRun(s);
  };
  v1::Run first = shaped("b1", 0);
  ASSERT_EQ(first.blame_size(), 1) << first.summary();
  first.mutable_blame(0)->set_streak(7);  // a client's value is not the server's
  v1::UploadRunResponse r1 = Store(first);
  ASSERT_EQ(r1.blame_streaks_size(), 1);
  EXPECT_EQ(r1.blame_streaks(0), 1u);
  v1::UploadRunResponse r2 = Store(shaped("b2", 1));
  ASSERT_EQ(r2.blame_streaks_size(), 1);
  EXPECT_EQ(r2.blame_streaks(0), 2u);
  auto row = store_->FindRun("b2");
  ASSERT_TRUE(row.ok() && *row);
  auto header = store_->ReadHeader((*row)->key);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->blame(0).streak(), 2u);
  // The first run again, as the sweep uploaded it: the same run, whatever the streaks.
  v1::UploadRunResponse again = Store(first);
  EXPECT_TRUE(again.already_stored());
}

TEST_F(StoreSuite, ARunUploadedLateDoesNotReplaceNewerNoise) {
  Store(FakeRun(Spec("new", 5)));
  auto before = store_->ReadLinkNoise("lab", 0, 1 << 20);
  ASSERT_TRUE(before.ok() && before->has_value());
  Store(FakeRun(Spec("old", 2)));
  auto after = store_->ReadLinkNoise("lab", 0, 1 << 20);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->newest_started_us, (*before)->newest_started_us);
  EXPECT_EQ((*after)->data, (*before)->data);
  // The 64 KiB matrix is not a verdict size: no noise kept for it.
  auto small = store_->ReadLinkNoise("lab", 0, 65536);
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(small->has_value());
}

TEST_F(StoreSuite, CellsOfANodeAndOfALink) {
  Store(FakeRun(Spec("r1", 0)));
  auto row = store_->FindRun("r1");
  ASSERT_TRUE(row.ok() && *row);
  auto n1 = store_->NodeId("node1");
  ASSERT_TRUE(n1.ok());
  size_t as_src = 0, as_dst = 0;
  store::CellQuery q;
  q.run = (*row)->key;
  q.src = *n1;
  ASSERT_TRUE(store_->ReadCells(q, [&](const store::CellRecord&) {
    ++as_src;
    return absl::OkStatus();
  }).ok());
  q.src = -1;
  q.dst = *n1;
  q.size_bytes = 1 << 20;
  ASSERT_TRUE(store_->ReadCells(q, [&](const store::CellRecord& c) {
    EXPECT_EQ(c.size_bytes, 1u << 20);
    ++as_dst;
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(as_src, 6u);
  EXPECT_EQ(as_dst, 3u);
}

TEST_F(StoreSuite, RetentionKeepsBaselines) {
  for (int d = 0; d < 4; ++d) Store(FakeRun(Spec("r" + std::to_string(d), d)));
  auto r0 = store_->FindRun("r0");
  ASSERT_TRUE(r0.ok() && *r0);
  ASSERT_TRUE(store_->SetBaseline("lab", (*r0)->key, "test").ok());
  auto r2 = store_->FindRun("r2");
  ASSERT_TRUE(r2.ok() && *r2);
  auto deleted = store_->DeleteRunsBefore((*r2)->started_us);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 1u);  // r1; r0 is the baseline
  std::set<std::string> left;
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  for (const auto& r : *runs) left.insert(r.run_id);
  EXPECT_EQ(left, (std::set<std::string>{"r0", "r2", "r3"}));
  store::CellQuery q;
  auto r1 = FakeRun(Spec("r1", 1));  // its cells are gone too: a fresh upload stores again
  EXPECT_FALSE(Store(r1).already_stored());
}

}  // namespace
}  // namespace gdrbench::server
