// The server's request side without a network: tokens and roles, request
// validation, query parameters into requests, status -> HTTP, and the sweep
// queue (one sweep per cluster at a time, cancel, watchers) over a fake
// executor.
#include <atomic>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/api/auth.h"
#include "server/api/handler.h"
#include "server/api/http_json.h"
#include "server/metrics/metrics.h"
#include "server/sweeps/sweep_manager.h"

namespace gdrbench::server {
namespace {

using api::Authorizer;
using api::Role;

TEST(Authorizer, RolesFromTheFileAndRefusals) {
  auto a = Authorizer::Parse("# tokens\nread  r-0123456789abcdef dash\nwrite w-0123456789abcdef ci\n", "t");
  ASSERT_TRUE(a.ok()) << a.status();
  auto r = a->Check("Bearer r-0123456789abcdef", Role::kRead);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "dash");
  EXPECT_EQ(a->Check("Bearer r-0123456789abcdef", Role::kWrite).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(a->Check("bearer w-0123456789abcdef", Role::kWrite).ok());
  EXPECT_EQ(a->Check("", Role::kRead).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(a->Check("Bearer r-0123456789abcdeX", Role::kRead).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(a->Check("Basic abc", Role::kRead).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(Authorizer, BadFilesNameTheLine) {
  EXPECT_EQ(Authorizer::Parse("admin x-0123456789abcdef\n", "f").status().message(),
            "f:1: role 'admin' is not read or write");
  EXPECT_NE(Authorizer::Parse("read short\n", "f").status().message().find("shorter than 16"),
            absl::string_view::npos);
  EXPECT_FALSE(Authorizer::Parse("# nothing\n", "f").ok());
  EXPECT_FALSE(Authorizer::Parse("read a-0123456789abcdef\nwrite a-0123456789abcdef\n", "f").ok());
}

// Issue 27: one rule for ids and names, the API's and ingest's (names.h): what
// one refuses the other refuses, in the same words.
TEST(Validation, TheApiAndIngestShareOneRuleForIdsAndNames) {
  for (const std::string& id : {std::string(128, 'a'), std::string("r-1.2:3_x")}) {
    EXPECT_TRUE(api::CheckRunId(id, "run_id").ok()) << id;
  }
  v1::Run run;
  run.set_run_id(std::string(129, 'a'));
  run.mutable_started_at()->set_seconds(1);
  run.add_excluded_nodes("n1: left out");
  const absl::Status api_says = api::CheckRunId(run.run_id(), "run_id");
  const absl::Status ingest_says = history::ValidateHeader(run, {});
  EXPECT_FALSE(api_says.ok());
  EXPECT_EQ(ingest_says.message(), api_says.message());
  run.set_run_id("r1");
  run.set_cluster("prod east");
  EXPECT_THAT(std::string(history::ValidateHeader(run, {}).message()),
              ::testing::HasSubstr(api::CheckClusterName("prod east", "cluster", false).message()));
  EXPECT_FALSE(history::CheckNodeName("gpu\n01", "node").ok());
  EXPECT_TRUE(history::CheckNodeName(std::string(253, 'n'), "node").ok());
  EXPECT_FALSE(history::CheckNodeName(std::string(254, 'n'), "node").ok());
}

TEST(Validation, RunIdsClustersPagesAndTokens) {
  EXPECT_TRUE(api::CheckRunId("20261201-101500-ab12", "run_id").ok());
  EXPECT_EQ(api::CheckRunId("", "run_id").message(), "run_id is required (a run id)");
  EXPECT_FALSE(api::CheckRunId("a/b", "run_id").ok());
  EXPECT_FALSE(api::CheckRunId(std::string(129, 'a'), "run_id").ok());
  EXPECT_TRUE(api::CheckClusterName("", "cluster", false).ok());
  EXPECT_FALSE(api::CheckClusterName("", "cluster", true).ok());
  EXPECT_FALSE(api::CheckClusterName("prod east", "cluster", false).ok());
  EXPECT_EQ(api::CheckPageSize(1001, 1000, "page_size").message(), "page_size 1001 is more than 1000");
  auto t = api::ParseRunsToken("t1767225600000000.42");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->second, 42);
  EXPECT_FALSE(api::ParseRunsToken("c1.2.3.4").ok());
  EXPECT_FALSE(api::ParseRunsToken("t-1.2").ok());
  EXPECT_FALSE(api::ParseCellsToken("c1.2.3").ok());
  EXPECT_TRUE(api::ParseOffsetToken("o100").ok());
}

TEST(HttpJson, QueryParametersByNameTypedByTheField) {
  v1::ListCellsRequest req;
  ASSERT_TRUE(api::FieldsToMessage({{"run_id", "r1"}, {"sizeBytes", "1048576"}, {"rail", "0"}}, &req).ok());
  EXPECT_EQ(req.run_id(), "r1");
  EXPECT_EQ(req.size_bytes(), 1048576u);
  EXPECT_TRUE(req.has_rail());
  v1::ListRunsRequest lr;
  EXPECT_NE(api::FieldsToMessage({{"colour", "red"}}, &lr).message().find("unknown parameter 'colour'"),
            absl::string_view::npos);
  EXPECT_FALSE(api::FieldsToMessage({{"page_size", "-3"}}, &lr).ok());
  ASSERT_TRUE(api::FieldsToMessage({{"since", "2026-01-01T00:00:00Z"}}, &lr).ok());
  EXPECT_EQ(lr.since().seconds(), 1767225600);
  v1::GetRunRequest gr;
  ASSERT_TRUE(api::FieldsToMessage({{"view", "RUN_VIEW_FULL"}}, &gr).ok());
  EXPECT_EQ(gr.view(), v1::RUN_VIEW_FULL);
  EXPECT_FALSE(api::FieldsToMessage({{"run_id", "a"}, {"runId", "b"}}, &gr).ok());
}

TEST(HttpJson, StatusCodesAndTheErrorBody) {
  EXPECT_EQ(api::HttpStatus(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(api::HttpStatus(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(api::HttpStatus(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(api::HttpStatus(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(api::HttpStatus(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(api::ErrorJson(absl::InvalidArgumentError("a \"b\"\n")),
            R"({"error":{"code":400,"status":"INVALID_ARGUMENT","message":"a \"b\"\n"}})");
}

// Issue 31: arrays nested 100,000 deep inside excludedNodes were accepted.
TEST(HttpJson, DeepNestingIsRefusedBeforeParsing) {
  v1::Run run;
  const std::string deep = "{\"runId\":\"r\",\"excludedNodes\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  absl::Status st = api::JsonToMessage(deep, &run);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "the body is not a JSON gdrbench.v1.Run: arrays and objects nest 100001 deep, more than 32");
  // Brackets inside strings are text, not nesting.
  EXPECT_TRUE(api::JsonToMessage("{\"runId\":\"r\",\"summary\":\"" + std::string(100, '[') + "\\\"\"}", &run).ok());
  EXPECT_EQ(run.summary(), std::string(100, '[') + "\"");
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(metrics::EscapeLabel("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

// Sweeps: a fake executor whose runs wait until released.
class FakeExecutor : public sweeps::SweepExecutor {
 public:
  std::set<std::string> clusters() const override { return {"a", "b"}; }
  absl::Status Check(const std::string&, const v1::SweepSpec& spec) const override {
    if (!v1::SweepMode_IsValid(spec.sweep_mode())) return absl::InvalidArgumentError("sweep_mode bogus");
    return absl::OkStatus();
  }
  absl::StatusOr<v1::Run> Run(const std::string& cluster, const v1::SweepSpec&, const ProgressFn& progress,
                              const std::atomic<bool>& cancelled) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      max_running_ = std::max(max_running_.load(), ++running_[cluster]);
    }
    v1::SweepProgress p;
    p.set_tests_total(2);
    p.set_phase("sweep");
    progress(p);
    while (!release_ && !cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    {
      std::lock_guard<std::mutex> l(mu_);
      --running_[cluster];
    }
    if (cancelled) return absl::CancelledError("cancelled");
    p.set_tests_done(2);
    progress(p);
    v1::Run r;
    r.set_run_id("run-" + cluster + std::to_string(++n_));
    r.set_passed(true);
    return r;
  }
  std::atomic<bool> release_{false};
  std::map<std::string, std::atomic<int>> running_;  // operator[] makes them
  std::atomic<int> max_running_{0};
  std::mutex mu_;
  std::atomic<int> n_{0};
};

v1::SweepState WaitState(sweeps::SweepManager& m, const std::string& id, v1::SweepState want) {
  for (int i = 0; i < 2000; ++i) {
    auto j = m.Get(id);
    if (j.ok() && j->state() == want) return want;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return m.Get(id)->state();
}

v1::SweepSpec Mode(const std::string& mode) {
  v1::SweepSpec s;
  s.set_mode(mode);
  return s;
}

TEST(SweepManager, OneSweepPerClusterQueueCancelAndWatch) {
  FakeExecutor ex;
  std::vector<std::string> stored;
  std::mutex mu;
  sweeps::SweepManager m(&ex, [&](const v1::Run& r) -> absl::StatusOr<v1::UploadRunResponse> {
    std::lock_guard<std::mutex> l(mu);
    stored.push_back(r.run_id());
    return v1::UploadRunResponse();
  });
  EXPECT_EQ(m.Submit("c", {}, "t").status().code(), absl::StatusCode::kFailedPrecondition);
  v1::SweepSpec bogus;
  bogus.set_sweep_mode(static_cast<v1::SweepMode>(99));
  EXPECT_EQ(m.Submit("a", bogus, "t").status().code(), absl::StatusCode::kInvalidArgument);
  // Three different requests (equal ones would be merged: below).
  auto j1 = m.Submit("a", Mode("m1"), "t");
  auto j2 = m.Submit("a", Mode("m2"), "t");
  auto j3 = m.Submit("a", Mode("m3"), "t");
  auto k1 = m.Submit("b", {}, "t");
  ASSERT_TRUE(j1.ok() && j2.ok() && j3.ok() && k1.ok());
  EXPECT_EQ(WaitState(m, j1->job_id(), v1::SWEEP_STATE_RUNNING), v1::SWEEP_STATE_RUNNING);
  EXPECT_EQ(WaitState(m, k1->job_id(), v1::SWEEP_STATE_RUNNING), v1::SWEEP_STATE_RUNNING);
  EXPECT_EQ(m.Get(j2->job_id())->state(), v1::SWEEP_STATE_QUEUED);
  EXPECT_EQ(m.Get(j3->job_id())->queue_position(), 1u);
  // Cancel the queued one: it ends at once and j3 moves up.
  auto c = m.Cancel(j2->job_id());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->state(), v1::SWEEP_STATE_CANCELLED);
  EXPECT_EQ(m.Get(j3->job_id())->queue_position(), 0u);
  EXPECT_EQ(m.Cancel(j2->job_id()).status().code(), absl::StatusCode::kFailedPrecondition);
  // A watcher of j1 sees it to the end.
  std::vector<v1::SweepState> seen;
  std::thread watcher([&] {
    EXPECT_TRUE(m.Watch(j1->job_id(), [&](const v1::SweepJob& j) {
      seen.push_back(j.state());
      return true;
    }, nullptr, std::chrono::milliseconds(1)).ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ex.release_ = true;
  watcher.join();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), v1::SWEEP_STATE_RUNNING);
  EXPECT_EQ(seen.back(), v1::SWEEP_STATE_SUCCEEDED);
  EXPECT_EQ(WaitState(m, j3->job_id(), v1::SWEEP_STATE_SUCCEEDED), v1::SWEEP_STATE_SUCCEEDED);
  EXPECT_EQ(ex.max_running_.load(), 1);  // never two sweeps of one cluster at once
  EXPECT_EQ(WaitState(m, k1->job_id(), v1::SWEEP_STATE_SUCCEEDED), v1::SWEEP_STATE_SUCCEEDED);
  EXPECT_FALSE(m.Get(j1->job_id())->run_id().empty());
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(stored.size(), 3u);  // j1, j3 and k1
}

// A watcher of a job queued behind a sweep that does not end: nothing changes,
// so only the heartbeat can tell that its client left (the CI run where 64
// event streams of a queued job kept their slots after a client closed).
TEST(SweepManager, AWatcherWhoseClientLeftEndsWithoutAChange) {
  FakeExecutor ex;
  sweeps::SweepManager m(&ex, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(v1::UploadRunResponse()); });
  auto running = m.Submit("a", Mode("m1"), "t");
  auto queued = m.Submit("a", Mode("m2"), "t");
  ASSERT_TRUE(running.ok() && queued.ok());
  ASSERT_EQ(WaitState(m, running->job_id(), v1::SWEEP_STATE_RUNNING), v1::SWEEP_STATE_RUNNING);
  std::atomic<bool> left{false};
  std::atomic<int> asked{0}, sent{0};
  std::thread watcher([&] {
    EXPECT_TRUE(m.Watch(queued->job_id(), [&](const v1::SweepJob&) { return ++sent, true; },
                        [&] { return ++asked, !left.load(); }, std::chrono::milliseconds(1),
                        std::chrono::milliseconds(5)).ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_GT(asked.load(), 0);  // asked while the job stood still
  left = true;
  watcher.join();  // ends without the job changing
  EXPECT_EQ(m.Get(queued->job_id())->state(), v1::SWEEP_STATE_QUEUED);
  EXPECT_EQ(sent.load(), 1);  // the job as it was, once
  ex.release_ = true;
  EXPECT_EQ(WaitState(m, queued->job_id(), v1::SWEEP_STATE_SUCCEEDED), v1::SWEEP_STATE_SUCCEEDED);
}

// Issue 31: 1,000 requests for one cluster were all queued. The queue holds
// max_queued; a request equal to a queued one is that job.
TEST(SweepManager, TheQueueIsBoundedAndEqualRequestsMerge) {
  FakeExecutor ex;
  sweeps::SweepManager m(&ex, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(v1::UploadRunResponse()); },
                         /*max_queued=*/2);
  auto running = m.Submit("a", Mode("m0"), "t");
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(WaitState(m, running->job_id(), v1::SWEEP_STATE_RUNNING), v1::SWEEP_STATE_RUNNING);
  auto q1 = m.Submit("a", Mode("m1"), "t");
  auto q2 = m.Submit("a", Mode("m2"), "u");
  ASSERT_TRUE(q1.ok() && q2.ok());
  auto again = m.Submit("a", Mode("m1"), "u");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->job_id(), q1->job_id());
  EXPECT_EQ(again->submitted_by(), "t");
  auto full = m.Submit("a", Mode("m3"), "t");
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.status().message(),
            "cluster 'a' has 2 sweeps queued, the limit (--max-queued-sweeps): wait for one to start or cancel one");
  EXPECT_EQ(api::HttpStatus(full.status().code()), 429);
  EXPECT_EQ(m.Load()["a"], (std::pair<uint32_t, uint32_t>{2, 1}));
  // Another cluster has its own queue; a cancelled request frees its place.
  EXPECT_TRUE(m.Submit("b", Mode("m3"), "t").ok());
  ASSERT_TRUE(m.Cancel(q2->job_id()).ok());
  EXPECT_TRUE(m.Submit("a", Mode("m3"), "t").ok());
  ex.release_ = true;
}

TEST(SweepManager, CancelARunningSweep) {
  FakeExecutor ex;
  sweeps::SweepManager m(&ex, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(v1::UploadRunResponse()); });
  auto j = m.Submit("a", {}, "t");
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(WaitState(m, j->job_id(), v1::SWEEP_STATE_RUNNING), v1::SWEEP_STATE_RUNNING);
  ASSERT_TRUE(m.Cancel(j->job_id()).ok());
  EXPECT_EQ(WaitState(m, j->job_id(), v1::SWEEP_STATE_CANCELLED), v1::SWEEP_STATE_CANCELLED);
}

}  // namespace
}  // namespace gdrbench::server
