// A test connected ahead (issue 30 item 2) through the real agent handler on
// the fake NIC, out of band: the controller opens the target with
// hold_start and starts the initiator's RunWriteSweep at once (its QPs go
// to the target through ConnectTarget); no size moves until ConnectTarget
// with start, and a test that never starts is stopped and closed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "agent/service/agent_handler.h"
#include "agent/service/sweep_convert.h"
#include "agent/service/target_registry.h"
#include "controller/run/pair_tester.h"
#include "tests/unit/agent/bench/fake_sessions.h"
#include "tests/unit/agent/service/handler_agent.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::HasSubstr;
namespace run = controller::run;
using ::gdrbench::agent::service::testing::FakeNicSweepParams;
using ::gdrbench::agent::service::testing::HandlerAgent;

class HeldStart : public ::testing::Test {
 protected:
  std::shared_ptr<bench::testing::FakeSessionFactory> factory_ =
      std::make_shared<bench::testing::FakeSessionFactory>();
  AgentHandler handler_{AgentConfig{.fs_root = "/", .devices = {}}, factory_};
  HandlerAgent agent_{handler_};
  run::PairSide init_{&agent_, "A", "fake0", "", "host"};
  run::PairSide target_{&agent_, "B", "fake1", "", "host"};
  std::atomic<int> failed_answers_{0};
  std::function<void(bool, const absl::Status&)> on_answer_ = [this](bool, const absl::Status& st) {
    if (!st.ok()) failed_answers_.fetch_add(1);
  };
};

TEST_F(HeldStart, AConnectedTestMovesNoDataUntilStartedThenPassesVerified) {
  run::PairTestOptions o;
  run::PreparedTarget prepared;
  run::ConnectPairAhead(init_, target_, FakeNicSweepParams(), false, o, 0, &prepared, on_answer_);
  ASSERT_TRUE(prepared.status.ok()) << prepared.status;
  EXPECT_TRUE(prepared.opened.start_held());
  ASSERT_NE(prepared.held, nullptr);
  // Connected (the initiator's QPs handed over) and waiting: nothing sent.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(agent_.sizes.load(), 0);
  v1::PairResult r;
  ASSERT_TRUE(
      run::RunPairTest(init_, target_, FakeNicSweepParams(), false, o, &r, on_answer_, &prepared).ok());
  EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.reason();
  ASSERT_EQ(r.sizes_size(), 2);
  for (const auto& s : r.sizes()) {
    EXPECT_EQ(s.status(), v1::RESULT_STATUS_OK) << s.error();
    EXPECT_TRUE(s.verified());
  }
  EXPECT_EQ(r.src().memory_kind(), "host");
  EXPECT_EQ(r.summary().cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(failed_answers_.load(), 0);
}

TEST_F(HeldStart, ATestNeverStartedIsStoppedWithoutDataAndItsTargetClosed) {
  run::PreparedTarget prepared;
  run::ConnectPairAhead(init_, target_, FakeNicSweepParams(), false, {}, 0, &prepared, on_answer_);
  ASSERT_NE(prepared.held, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  run::ClosePreparedTarget(target_, prepared, on_answer_);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(agent_.sizes.load(), 0);
  // The target is gone: starting it now finds nothing.
  v1::ConnectTargetRequest start;
  start.set_target_id(prepared.opened.target_id());
  start.set_start(true);
  EXPECT_EQ(handler_.ConnectTarget(start).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(HeldStart, OnlyAHeldTargetTakesAStart) {
  v1::OpenTargetRequest open;
  open.set_device("fake1");
  *open.mutable_params() = FakeNicSweepParams();
  auto t = handler_.OpenTarget(open);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->start_held());
  v1::ConnectTargetRequest start;
  start.set_target_id(t->target_id());
  start.set_start(true);
  auto st = handler_.ConnectTarget(start);
  EXPECT_EQ(st.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.status().message()), HasSubstr("was not opened with hold_start"));
  v1::CloseTargetRequest close;
  close.set_target_id(t->target_id());
  EXPECT_TRUE(handler_.CloseTarget(close).ok());
}

}  // namespace
}  // namespace gdrbench::agent::service
