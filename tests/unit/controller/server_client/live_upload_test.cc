// The live upload (controller/server_client/live_upload.h) of a real sweep's
// journal (the sweep library over fake agents) into the server's handler on
// SQLite: a cut after k chunks, a restarted server, a crashed controller's
// torn journal continued by --resume; each time the client asks the server
// where it is and resumes from the journal, and the server ends with the
// same cells as an uninterrupted upload. The final upload closes the live
// run and stores the run exactly as an upload without a live run does.
#include "controller/server_client/live_upload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"
#include "report/run_chunks.h"
#include "server/api/handler.h"
#include "server/history/export.h"
#include "server/sweeps/sweep_manager.h"
#include "tests/unit/server/store/store_suite.h"

namespace gdrbench::controller {
namespace {

using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

// A sweep of 6 fake nodes x 2 rails (30 tests a rail), journaled.
v1::Run SweepWithJournal(const std::string& journal, const std::string& run_id) {
  run::FakeCluster cluster(6, 2, 100);
  sweep::SweepConfig c;
  c.inventory.source = "test";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.parallel = 4;
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  c.journal_path = journal;
  c.run_id = run_id;
  auto run = sweep::RunSweep(c);
  EXPECT_TRUE(run.ok()) << run.status();
  return run.ok() ? *run : v1::Run();
}

// The server: a handler on a test store, which a test can restart, and a
// LiveApi over it that can be cut (every call UNAVAILABLE) after some appends.
class Server : public LiveApi {
 public:
  explicit Server(std::string name) : name_(std::move(name)) {
    auto s = server::testing::OpenTestStore(name_);
    EXPECT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    Start();
  }
  void Restart() {
    handler_.reset();
    sweeps_.reset();
    store_.reset();
    auto s = server::testing::ReopenTestStore(name_);
    EXPECT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    Start();
  }
  absl::StatusOr<v1::LiveRun> OpenLiveRun(const v1::OpenLiveRunRequest& req) override {
    if (cut_) return absl::UnavailableError("cut");
    ++opens_;
    return handler_->OpenLiveRun(req, server::api::Principal{"tester", server::api::Role::kWrite});
  }
  absl::StatusOr<v1::LiveAck> AppendLiveRun(const v1::LiveChunk& chunk) override {
    if (cut_ || appends_left_ == 0) {
      cut_ = true;
      return absl::UnavailableError("the network is cut");
    }
    if (appends_left_ > 0) --appends_left_;
    ++appends_;
    return handler_->AppendLiveRun(chunk);
  }
  // Every live cell of `run`, in test order, as text.
  std::vector<std::string> Cells(const std::string& run) {
    std::vector<std::string> out;
    v1::ListLiveCellsRequest req;
    req.set_run_id(run);
    req.set_page_size(7);
    for (int guard = 0; guard < 1000; ++guard) {
      auto r = handler_->ListLiveCells(req);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok() || r->cells().empty()) break;
      for (const auto& c : r->cells()) {
        out.push_back(
            absl::StrCat(c.rail(), ":", c.src(), ">", c.dst(), "@", c.size_bytes(), "=", c.bw_avg_gbps()));
      }
      req.set_from_test(r->next_test());
    }
    return out;
  }
  // The final upload, as UploadRun's handler does it.
  absl::StatusOr<v1::UploadRunResponse> Upload(const v1::Run& run) {
    auto ingest = handler_->NewUpload();
    absl::Status st = report::ForEachRunChunk(run, {}, [&](const v1::RunChunk& c) {
      return c.has_header() ? ingest->Begin(c.header()) : ingest->Add(c);
    });
    if (!st.ok()) return st;
    return handler_->FinishUpload(*ingest);
  }
  // The stored run in UploadRun's pieces, serialized.
  std::vector<std::string> Exported(const std::string& run_id) {
    std::vector<std::string> out;
    auto row = store_->FindRun(run_id);
    EXPECT_TRUE(row.ok() && row->has_value());
    if (!row.ok() || !row->has_value()) return out;
    absl::Status st = server::history::ExportRun(*store_, **row, [&](const v1::RunChunk& c) {
      v1::RunChunk copy = c;
      if (copy.has_header()) copy.mutable_header()->clear_regressions();  // stored_at-free parts only
      out.push_back(copy.SerializeAsString());
      return absl::OkStatus();
    });
    EXPECT_TRUE(st.ok()) << st;
    return out;
  }
  server::api::Handler& handler() { return *handler_; }

  bool cut_ = false;
  int appends_left_ = -1;  // < 0: no limit
  int appends_ = 0, opens_ = 0;

 private:
  void Start() {
    sweeps_ = std::make_unique<server::sweeps::SweepManager>(nullptr, [](const v1::Run&) {
      return absl::StatusOr<v1::UploadRunResponse>(v1::UploadRunResponse());
    });
    handler_ = std::make_unique<server::api::Handler>(*store_, *sweeps_, server::api::HandlerOptions{});
  }
  std::string name_;
  std::unique_ptr<server::store::Store> store_;
  std::unique_ptr<server::sweeps::SweepManager> sweeps_;
  std::unique_ptr<server::api::Handler> handler_;
};

LiveUploadOptions Sync(size_t per_chunk) {
  LiveUploadOptions o;
  o.cluster = "lab";
  o.max_tests_per_chunk = per_chunk;
  o.start_thread = false;
  return o;
}

class LiveUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    journal_ = TmpPath(name_ + ".journal");
    run_ = SweepWithJournal(journal_, "live-" + name_);
    run_.set_cluster("lab");  // as `gdrbench sweep --cluster lab` uploads it
    ASSERT_FALSE(run_.run_id().empty());
    // What an uninterrupted upload leaves on a server of its own.
    Server whole(name_ + "_whole");
    LiveUploader up(whole, journal_, Sync(4));
    ASSERT_TRUE(up.SendAvailable().ok());
    LiveUploadReport r = up.Finish(std::chrono::milliseconds(0));
    ASSERT_TRUE(r.complete()) << r.Describe();
    tests_ = r.tests_in_journal;
    ASSERT_EQ(tests_, static_cast<uint64_t>(run_.pairs_size()));
    whole_cells_ = whole.Cells(run_.run_id());
    ASSERT_EQ(whole_cells_.size(), tests_);  // one size a test
  }
  void TearDown() override { std::filesystem::remove(journal_); }

  std::string name_, journal_;
  v1::Run run_;
  uint64_t tests_ = 0;
  std::vector<std::string> whole_cells_;
};

TEST_F(LiveUpload, ACutAfterKChunksResumesFromTheJournalAtTheServersAck) {
  Server s(name_);
  s.appends_left_ = 3;
  LiveUploader up(s, journal_, Sync(4));
  absl::Status st = up.SendAvailable();
  EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  EXPECT_EQ(up.Report().tests_acked, 12u);
  EXPECT_THAT(up.Report().Describe(),
              HasSubstr("12 of 16 tests read from the journal are on the server; last failure: "
                        "the network is cut"));
  // The network is back: the uploader asks where the server is first.
  s.cut_ = false;
  s.appends_left_ = -1;
  const int opens = s.opens_;
  ASSERT_TRUE(up.SendAvailable().ok());
  EXPECT_EQ(s.opens_, opens + 1);
  LiveUploadReport r = up.Finish(std::chrono::milliseconds(0));
  EXPECT_TRUE(r.complete()) << r.Describe();
  EXPECT_EQ(r.tests_acked, tests_);
  EXPECT_EQ(s.Cells(run_.run_id()), whole_cells_);
}

TEST_F(LiveUpload, AServerRestartedMidUploadLosesNothingAcknowledged) {
  Server s(name_);
  s.appends_left_ = 2;
  LiveUploader up(s, journal_, Sync(5));
  EXPECT_FALSE(up.SendAvailable().ok());
  s.Restart();
  s.cut_ = false;
  s.appends_left_ = -1;
  ASSERT_TRUE(up.SendAvailable().ok());
  EXPECT_TRUE(up.Finish(std::chrono::milliseconds(0)).complete());
  EXPECT_EQ(s.Cells(run_.run_id()), whole_cells_);
}

TEST_F(LiveUpload, ACrashedControllersTornJournalIsContinuedByAResume) {
  // The controller died mid-record: its journal ends in a torn frame.
  std::string bytes;
  {
    std::ifstream in(journal_, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  const std::string torn = TmpPath(name_ + ".torn");
  {
    std::ofstream out(torn, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() * 6 / 10));
  }
  Server s(name_);
  uint64_t before = 0;
  {
    LiveUploader crashed(s, torn, Sync(3));
    ASSERT_TRUE(crashed.SendAvailable().ok());
    before = crashed.Report().tests_acked;
    EXPECT_GT(before, 0u);
    EXPECT_LT(before, tests_);
  }
  // --resume cuts the torn tail and appends the rest: the same records first.
  {
    std::ofstream out(torn, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const int appends = s.appends_;
  LiveUploader resumed(s, torn, Sync(3));  // a new process: nothing in memory
  ASSERT_TRUE(resumed.SendAvailable().ok());
  LiveUploadReport r = resumed.Finish(std::chrono::milliseconds(0));
  EXPECT_TRUE(r.complete()) << r.Describe();
  EXPECT_EQ(s.appends_ - appends,
            static_cast<int>((tests_ - before + 2) / 3));  // only what the server lacked
  EXPECT_EQ(s.Cells(run_.run_id()), whole_cells_);
  std::filesystem::remove(torn);
}

TEST_F(LiveUpload, TheFinalUploadClosesTheLiveRunAndStoresWhatAPlainUploadStores) {
  Server live(name_);
  {
    LiveUploader up(live, journal_, Sync(4));
    ASSERT_TRUE(up.SendAvailable().ok());
  }
  auto stored = live.Upload(run_);
  ASSERT_TRUE(stored.ok()) << stored.status();
  v1::GetLiveRunRequest get;
  get.set_run_id(run_.run_id());
  auto state = live.handler().GetLiveRun(get);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->state(), v1::LIVE_RUN_STATE_STORED);
  auto open = live.handler().ListLiveRuns({});
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->runs_size(), 0);
  // A late chunk or a resumed uploader learns that the run is stored, and stops.
  LiveUploader late(live, journal_, Sync(4));
  ASSERT_TRUE(late.SendAvailable().ok());
  EXPECT_TRUE(late.Report().stored);

  Server plain(name_ + "_plain");
  auto plain_stored = plain.Upload(run_);
  ASSERT_TRUE(plain_stored.ok()) << plain_stored.status();
  EXPECT_EQ(stored->cells(), plain_stored->cells());
  EXPECT_EQ(stored->pairs(), plain_stored->pairs());
  EXPECT_EQ(live.Exported(run_.run_id()), plain.Exported(run_.run_id()));
}

TEST_F(LiveUpload, TheThreadSendsWhileTheSweepRunsAndFinishReportsWhatItCouldNot) {
  Server s(name_);
  s.cut_ = true;  // the server is down the whole time
  LiveUploadOptions o = Sync(4);
  o.start_thread = true;
  o.interval = std::chrono::milliseconds(5);
  o.retry = std::chrono::milliseconds(5);
  LiveUploader up(s, journal_, o);
  for (int i = 0; i < 100; ++i) up.Notify();  // never blocks
  LiveUploadReport r = up.Finish(std::chrono::milliseconds(50));
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.tests_acked, 0u);
  EXPECT_EQ(r.tests_in_journal, tests_);  // counted to the end: the report says what the server lacks
  EXPECT_TRUE(absl::IsUnavailable(r.error)) << r.error;

  Server up2(name_ + "_up");
  LiveUploader threaded(up2, journal_, o);
  threaded.Notify();
  LiveUploadReport ok = threaded.Finish(std::chrono::seconds(5));
  EXPECT_TRUE(ok.complete()) << ok.Describe();
  EXPECT_EQ(up2.Cells(run_.run_id()), whole_cells_);
}

}  // namespace
}  // namespace gdrbench::controller
