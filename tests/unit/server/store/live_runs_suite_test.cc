// Live runs (server/history/live_runs.h) on each backend (store_suite.h):
// the streamed tests are idempotent (the same chunk twice, chunks out of
// order, a gap), survive a restart of the server, resume where the server
// says, and stay within the limits.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/history/live_runs.h"
#include "tests/unit/server/store/store_suite.h"

namespace gdrbench::server {
namespace {

using ::testing::HasSubstr;

v1::LivePlan Plan(uint32_t nodes) {
  v1::LivePlan p;
  p.set_cluster("lab");
  p.set_mode("all-pairs");
  for (uint32_t i = 0; i < nodes; ++i) p.add_nodes("node" + std::to_string(i));
  p.set_rails(1);
  p.add_sizes_bytes(65536);
  return p;
}

// Test i of a 4-node plan: a distinct (src, dst) and a value that names it.
v1::LiveTest NthTest(uint64_t i) {
  v1::LiveTest t;
  t.set_src(static_cast<uint32_t>(i % 4));
  t.set_dst(static_cast<uint32_t>((i / 4 + 1 + i % 4) % 4));
  t.set_round(static_cast<uint32_t>(i / 2));
  t.set_status(v1::RESULT_STATUS_OK);
  v1::LiveCell* c = t.add_cells();
  c->set_size_bytes(65536);
  c->set_status(v1::RESULT_STATUS_OK);
  c->set_bw_avg_gbps(100.0 + static_cast<double>(i));
  return t;
}

v1::LiveChunk Chunk(const std::string& run, uint64_t first, uint64_t n) {
  v1::LiveChunk c;
  c.set_run_id(run);
  c.set_first_test(first);
  for (uint64_t i = first; i < first + n; ++i) *c.add_tests() = NthTest(i);
  return c;
}

class LiveRunsSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    auto s = testing::OpenTestStore(name_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    live_ = std::make_unique<history::LiveRuns>(*store_, options_);
  }

  void Open(const std::string& run) {
    v1::OpenLiveRunRequest req;
    req.set_run_id(run);
    *req.mutable_plan() = Plan(4);
    auto r = live_->Open(req, "tester");
    ASSERT_TRUE(r.ok()) << r.status();
  }

  uint64_t Append(const v1::LiveChunk& c) {
    auto ack = live_->Append(c);
    EXPECT_TRUE(ack.ok()) << ack.status();
    return ack.ok() ? ack->next_test() : ~0ull;
  }

  // Every cell the API lists, as "src>dst=gbps" in test order.
  std::vector<std::string> Cells(const std::string& run, uint32_t page = 3) {
    std::vector<std::string> out;
    v1::ListLiveCellsRequest req;
    req.set_run_id(run);
    req.set_page_size(page);
    for (int guard = 0; guard < 1000; ++guard) {
      auto r = live_->Cells(req);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok() || r->cells().empty()) break;
      for (const auto& c : r->cells())
        out.push_back(absl::StrCat(c.src(), ">", c.dst(), "=", c.bw_avg_gbps()));
      req.set_from_test(r->next_test());
    }
    return out;
  }

  std::vector<std::string> Expected(uint64_t n) {
    std::vector<std::string> out;
    v1::LivePlan p = Plan(4);
    for (uint64_t i = 0; i < n; ++i) {
      v1::LiveTest t = NthTest(i);
      out.push_back(absl::StrCat(p.nodes(t.src()), ">", p.nodes(t.dst()), "=", t.cells(0).bw_avg_gbps()));
    }
    return out;
  }

  std::string name_;
  std::unique_ptr<store::Store> store_;
  history::LiveOptions options_;
  std::unique_ptr<history::LiveRuns> live_;
};

TEST_F(LiveRunsSuite, OpeningAgainAnswersWhereTheServerStands) {
  Open("r1");
  EXPECT_EQ(Append(Chunk("r1", 0, 5)), 5u);
  v1::OpenLiveRunRequest again;
  again.set_run_id("r1");
  *again.mutable_plan() = Plan(4);
  auto r = live_->Open(again, "someone-else");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), v1::LIVE_RUN_STATE_OPEN);
  EXPECT_EQ(r->next_test(), 5u);
  EXPECT_EQ(r->cells(), 5u);
  EXPECT_EQ(r->opened_by(), "tester");
  EXPECT_EQ(r->plan().nodes_size(), 4);
  // The same id with another plan is another sweep's.
  *again.mutable_plan() = Plan(3);
  EXPECT_EQ(live_->Open(again, "tester").status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(LiveRunsSuite, TheSameChunkTwiceIsStoredOnce) {
  Open("r1");
  EXPECT_EQ(Append(Chunk("r1", 0, 4)), 4u);
  EXPECT_EQ(Append(Chunk("r1", 0, 4)), 4u);
  EXPECT_EQ(Append(Chunk("r1", 4, 3)), 7u);
  EXPECT_EQ(Append(Chunk("r1", 4, 3)), 7u);
  EXPECT_EQ(Cells("r1"), Expected(7));
  auto r = live_->Get("r1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cells(), 7u);
}

TEST_F(LiveRunsSuite, ChunksOutOfOrderAreStoredOnceTheGapBeforeThemIsFilled) {
  Open("r1");
  EXPECT_EQ(Append(Chunk("r1", 4, 4)), 0u);  // ahead of the server: a gap, nothing stored
  EXPECT_TRUE(Cells("r1").empty());
  EXPECT_EQ(Append(Chunk("r1", 0, 4)), 4u);
  EXPECT_EQ(Append(Chunk("r1", 8, 2)), 4u);  // still a gap
  EXPECT_EQ(Append(Chunk("r1", 4, 4)), 8u);  // resent from where the ack said
  EXPECT_EQ(Append(Chunk("r1", 8, 2)), 10u);
  EXPECT_EQ(Cells("r1"), Expected(10));
}

TEST_F(LiveRunsSuite, AnOverlappingChunkIsStoredFromTheNextTestOn) {
  Open("r1");
  EXPECT_EQ(Append(Chunk("r1", 0, 5)), 5u);
  // Other chunk boundaries (a resumed controller batches differently).
  EXPECT_EQ(Append(Chunk("r1", 2, 6)), 8u);
  EXPECT_EQ(Append(Chunk("r1", 0, 3)), 8u);  // nothing new
  EXPECT_EQ(Cells("r1", 1), Expected(8));
  EXPECT_EQ(Cells("r1", 1000), Expected(8));
}

TEST_F(LiveRunsSuite, AServerRestartLosesNoAcknowledgedTestAndTheUploadResumes) {
  // An uninterrupted upload of 12 tests in chunks of 3 ...
  Open("whole");
  for (uint64_t at = 0; at < 12; at += 3) Append(Chunk("whole", at, 3));
  // ... and one cut after 2 chunks (the third never arrived), the server
  // restarted, the client asks where the server is and resumes there.
  Open("cut");
  Append(Chunk("cut", 0, 3));
  Append(Chunk("cut", 3, 3));
  live_.reset();
  store_.reset();
  auto again = testing::ReopenTestStore(name_);
  ASSERT_TRUE(again.ok()) << again.status();
  store_ = std::move(*again);
  live_ = std::make_unique<history::LiveRuns>(*store_, options_);
  v1::OpenLiveRunRequest req;
  req.set_run_id("cut");
  *req.mutable_plan() = Plan(4);
  auto where = live_->Open(req, "tester");
  ASSERT_TRUE(where.ok()) << where.status();
  ASSERT_EQ(where->next_test(), 6u);
  for (uint64_t at = where->next_test(); at < 12; at += 3) Append(Chunk("cut", at, 3));
  EXPECT_EQ(Cells("cut"), Cells("whole"));
  EXPECT_EQ(Cells("cut"), Expected(12));
}

TEST_F(LiveRunsSuite, AnOpenRunIsListedUntilAbandoned) {
  Open("r1");
  Open("r2");
  Append(Chunk("r2", 0, 2));
  auto list = live_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->runs_size(), 2);
  EXPECT_EQ(list->runs(0).run_id(), "r1");
  EXPECT_EQ(list->runs(1).next_test(), 2u);
  auto gone = live_->Abandon("r2");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_EQ(gone->next_test(), 2u);
  EXPECT_EQ(live_->Get("r2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(live_->Abandon("r2").status().code(), absl::StatusCode::kNotFound);
  // An append to an abandoned run is refused: the client stops.
  EXPECT_EQ(live_->Append(Chunk("r2", 2, 1)).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(live_->List().ok());
  EXPECT_EQ(live_->List()->runs_size(), 1);
}

TEST_F(LiveRunsSuite, AHostileClientMeetsTheLimits) {
  options_.max_open = 2;
  options_.max_tests_per_chunk = 8;
  options_.max_cells = 10;
  live_ = std::make_unique<history::LiveRuns>(*store_, options_);
  Open("r1");
  Open("r2");
  v1::OpenLiveRunRequest third;
  third.set_run_id("r3");
  *third.mutable_plan() = Plan(4);
  auto r = live_->Open(third, "tester");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("2 live runs open"));
  EXPECT_EQ(live_->Append(Chunk("r1", 0, 9)).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Append(Chunk("r1", 0, 8)), 8u);
  EXPECT_EQ(live_->Append(Chunk("r1", 8, 3)).status().code(),
            absl::StatusCode::kResourceExhausted);  // 11 cells
  v1::LiveChunk bad = Chunk("r1", 8, 1);
  bad.mutable_tests(0)->set_dst(4);
  EXPECT_EQ(live_->Append(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = Chunk("r1", 8, 1);
  bad.mutable_tests(0)->mutable_cells(0)->set_bw_avg_gbps(std::nan(""));
  EXPECT_EQ(live_->Append(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = Chunk("r1", 8, 1);
  bad.mutable_tests(0)->set_rail(1);
  EXPECT_EQ(live_->Append(bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Append(Chunk("r1", 8, 2)), 10u);  // what was refused stored nothing
  // Runs nothing was sent to for stale_after make room; one of them, opened
  // again (its sweep resumed), starts over at test 0 (its journal resends it).
  options_.stale_after = absl::ZeroDuration();
  live_ = std::make_unique<history::LiveRuns>(*store_, options_);
  r = live_->Open(third, "tester");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(live_->Append(Chunk("r2", 0, 1)).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(live_->List().ok());
  EXPECT_EQ(live_->List()->runs_size(), 1);
  options_.stale_after = absl::Hours(24);
  live_ = std::make_unique<history::LiveRuns>(*store_, options_);
  Open("r1");
  EXPECT_EQ(Append(Chunk("r1", 0, 1)), 1u);
  v1::OpenLiveRunRequest bad_open;
  bad_open.set_run_id("x y");
  EXPECT_EQ(live_->Open(bad_open, "t").status().code(), absl::StatusCode::kInvalidArgument);
  bad_open.set_run_id("r9");
  EXPECT_EQ(live_->Open(bad_open, "t").status().code(), absl::StatusCode::kInvalidArgument);  // no nodes
}

}  // namespace
}  // namespace gdrbench::server
