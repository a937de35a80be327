// The data path's control code on the fake NIC, in milliseconds: target
// leases and the reaper (with a clock the test moves), the agent's limits,
// and whole tests through AgentHandler (OpenTarget, RunWriteSweep with its
// out-of-band first message handed to ConnectTarget, VerifyTarget,
// CloseTarget) in bandwidth, bidirectional and latency modes.
#include "agent/service/target_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "agent/service/agent_handler.h"
#include "agent/service/sweep_convert.h"
#include "tests/unit/agent/bench/fake_sessions.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::HasSubstr;
using bench::testing::FakeSessionFactory;
using Clock = std::chrono::steady_clock;

v1::OpenTargetRequest OobOpen(int64_t lease_s = 10) {
  v1::OpenTargetRequest r;
  r.set_device("fake1");
  r.set_lease_ns(lease_s * 1'000'000'000);
  v1::SweepParams& p = *r.mutable_params();
  p.add_sizes_bytes(4096);
  p.set_iterations(4);
  p.set_cm(v1::CONNECTION_MODE_OOB);
  return r;
}

class Registry : public ::testing::Test {
 protected:
  Registry() {
    TargetLimits limits;
    limits.max_targets = 3;
    limits.max_total_bytes = 3 * 8192;
    registry_ = std::make_unique<TargetRegistry>(
        [this](const std::string& d) { return CheckDevice(*factory_, {}, d); }, factory_, limits,
        [this] { return now_; }, /*run_reaper=*/false);
  }
  std::shared_ptr<FakeSessionFactory> factory_ = std::make_shared<FakeSessionFactory>();
  int port_down_after_size_ = 0;  // the initiator's port goes down after that many sizes
  Clock::time_point now_ = Clock::now();
  std::unique_ptr<TargetRegistry> registry_;
};

TEST_F(Registry, ALeaseRunsOutOnlyWithoutCallsAndFreesEverything) {
  auto t = registry_->Open(OobOpen(10));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(t->oob().qps_size(), 1);
  EXPECT_GT(registry_->bytes_in_use(), 0u);
  EXPECT_TRUE(registry_->ReapExpired(now_ + std::chrono::seconds(9)).empty());
  // A call renews the lease from its own time.
  now_ += std::chrono::seconds(8);
  v1::VerifyTargetRequest v;
  v.set_target_id(t->target_id());
  (void)registry_->Verify(v, std::chrono::milliseconds(0));
  EXPECT_TRUE(registry_->ReapExpired(now_ + std::chrono::seconds(9)).empty());
  auto reaped = registry_->ReapExpired(now_ + std::chrono::seconds(11));
  ASSERT_EQ(reaped.size(), 1u);
  EXPECT_EQ(reaped[0], t->target_id());
  EXPECT_EQ(registry_->size(), 0u);
  EXPECT_EQ(registry_->bytes_in_use(), 0u);
  auto again = registry_->Verify(v, std::chrono::milliseconds(0));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("lease expired"));
}

TEST_F(Registry, TargetCountAndMemoryAreLimitedAndComeBackOnClose) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto t = registry_->Open(OobOpen());
    ASSERT_TRUE(t.ok()) << t.status();
    ids.push_back(t->target_id());
  }
  auto fourth = registry_->Open(OobOpen());
  EXPECT_EQ(fourth.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(fourth.status().message()), HasSubstr("3 targets"));
  ASSERT_TRUE(registry_->Close(ids[0]).ok());
  auto big = OobOpen();
  big.set_buffer_bytes(1 << 20);
  auto no_room = registry_->Open(big);
  EXPECT_EQ(no_room.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(no_room.status().message()), HasSubstr("memory limit"));
  EXPECT_TRUE(registry_->Open(OobOpen()).ok());
  EXPECT_EQ(registry_->Close(ids[0]).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(Registry, VerifyBeforeTheInitiatorSaysSoAndAFailedOpenHoldsNothing) {
  auto t = registry_->Open(OobOpen());
  ASSERT_TRUE(t.ok());
  v1::VerifyTargetRequest v;
  v.set_target_id(t->target_id());
  auto r = registry_->Verify(v, std::chrono::milliseconds(0));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no initiator has connected yet"));
  auto cm = OobOpen();
  cm.mutable_params()->set_cm(v1::CONNECTION_MODE_RDMA_CM);  // the fake has no rdma_cm
  uint64_t before = registry_->bytes_in_use();
  EXPECT_FALSE(registry_->Open(cm).ok());
  EXPECT_EQ(registry_->bytes_in_use(), before);
  v1::ConnectTargetRequest c;
  c.set_target_id("t99-fake1");
  EXPECT_EQ(registry_->Connect(c).code(), absl::StatusCode::kNotFound);
  c.set_target_id(t->target_id());
  EXPECT_EQ(registry_->Connect(c).code(), absl::StatusCode::kInvalidArgument);  // no QPs in it
}

// As agent/verbs/data_events.cc words an IBV_EVENT_QP_FATAL on a test's QP.
constexpr char kTargetQpFatal[] =
    "QP 17 (1 of 1) on fake1 failed (IBV_EVENT_QP_FATAL): the NIC moved it to the error state";

// A whole test through the agent's handler, as two agents and a controller
// run it: both "agents" are one handler here (one fake fabric).
class Handler : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSessionFactory> factory_ = std::make_shared<FakeSessionFactory>();
  int data_error_after_size_ = 0;  // ... an error event on its own CQ after that many sizes
  int target_error_after_size_ = 0;  // ... on the target's (fake1's) QP after that many sizes
  int port_down_after_size_ = 0;  // the initiator's port goes down after that many sizes
  AgentHandler handler_{AgentConfig{.fs_root = "/", .devices = {}}, factory_};

  struct Outcome {
    std::vector<v1::SizeResult> sizes;
    v1::SweepSummary summary;
    v1::VerifyTargetResponse verify;
    absl::Status verify_status;
    int connects = 0;
  };

  Outcome Run(v1::SweepParams params) {
    Outcome out;
    params.set_cm(v1::CONNECTION_MODE_OOB);
    v1::OpenTargetRequest open;
    open.set_device("fake1");
    *open.mutable_params() = params;
    auto target = handler_.OpenTarget(open);
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return out;
    v1::RunWriteSweepRequest sweep;
    sweep.set_device("fake0");
    sweep.set_target_id(target->target_id());
    *sweep.mutable_remote_buffers() = target->buffers();
    *sweep.mutable_params() = params;
    sweep.mutable_params()->set_cm(target->cm());
    *sweep.mutable_target_oob() = target->oob();
    std::atomic<bool> cancelled{false};
    absl::Status st = handler_.RunWriteSweep(
        sweep,
        [&](const v1::RunWriteSweepResponse& m) {
          if (m.has_connect()) {
            ++out.connects;
            v1::ConnectTargetRequest c;
            c.set_target_id(target->target_id());
            *c.mutable_initiator() = m.connect();
            auto ok = handler_.ConnectTarget(c);
            EXPECT_TRUE(ok.ok()) << ok.status();
          }
          if (m.has_size()) {
            out.sizes.push_back(m.size());
            if (port_down_after_size_ == static_cast<int>(out.sizes.size())) factory_->RaisePortDown();
            if (data_error_after_size_ == static_cast<int>(out.sizes.size())) factory_->RaiseDataError();
            if (target_error_after_size_ == static_cast<int>(out.sizes.size())) {
              factory_->RaiseDataErrorOn("fake1", kTargetQpFatal);
              // The initiator holds here, before the next size's barrier,
              // long enough for the target's watch (1 ms) to be heard.
              std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
          }
          if (m.has_summary()) out.summary = m.summary();
          return true;
        },
        cancelled);
    EXPECT_TRUE(st.ok()) << st;
    if (params.verify() || params.bidirectional()) {
      v1::VerifyTargetRequest v;
      v.set_target_id(target->target_id());
      v.set_seed(params.seed());
      auto vr = handler_.VerifyTarget(v);
      out.verify_status = vr.status();
      if (vr.ok()) out.verify = *vr;
    }
    v1::CloseTargetRequest c;
    c.set_target_id(target->target_id());
    EXPECT_TRUE(handler_.CloseTarget(c).ok());
    return out;
  }
};

TEST_F(Handler, OutOfBandBandwidthSweepVerifiesOnTheTarget) {
  v1::SweepParams p;
  for (uint64_t s : {2, 4096, 65536}) p.add_sizes_bytes(s);
  p.set_iterations(8);
  p.set_qps(2);
  p.set_tx_depth(4);
  p.set_verify(true);
  p.set_seed(5);
  Outcome o = Run(p);
  EXPECT_EQ(o.connects, 1);
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_OK) << o.summary.error();
  EXPECT_EQ(o.summary.cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(o.summary.gid_index(), 1);
  EXPECT_EQ(o.summary.gid_type(), "RoCE v2");
  EXPECT_THAT(o.summary.gid_choice(), HasSubstr("one subnet"));
  ASSERT_EQ(o.sizes.size(), 3u);
  for (const auto& s : o.sizes) EXPECT_EQ(s.iterations(), 16u);
  ASSERT_TRUE(o.verify_status.ok()) << o.verify_status;
  ASSERT_EQ(o.verify.sizes_size(), 3);
  for (const auto& s : o.verify.sizes()) EXPECT_TRUE(s.verified()) << s.error();
}

// Issue 11: a port that goes down ends the test with the event named; the
// sizes measured before it are kept and no further size runs.
TEST_F(Handler, APortThatGoesDownEndsTheTestWithTheEventNamed) {
  v1::SweepParams p;
  for (uint64_t s : {4096, 65536, 262144}) p.add_sizes_bytes(s);
  p.set_iterations(8);
  p.set_qps(1);
  port_down_after_size_ = 1;
  Outcome o = Run(p);
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_THAT(o.summary.error(), HasSubstr("port 1 of fake0 went down (IBV_EVENT_PORT_ERR); 1 of 3 sizes ran"));
  ASSERT_EQ(o.sizes.size(), 1u);
  EXPECT_EQ(o.sizes[0].status(), v1::RESULT_STATUS_OK);
}

// Issue 34: an error event on the test's own CQ or QP (IBV_EVENT_CQ_ERR, QP
// fatal; agent/verbs/data_events.h) ends the test with the event named, as a
// port fault does, instead of a loop waiting for completions that were lost.
TEST_F(Handler, AnErrorEventOnTheTestsOwnCqEndsItWithTheEventNamed) {
  v1::SweepParams p;
  for (uint64_t s : {4096, 65536, 262144}) p.add_sizes_bytes(s);
  p.set_iterations(8);
  p.set_qps(1);
  data_error_after_size_ = 1;
  Outcome o = Run(p);
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_THAT(o.summary.error(),
              HasSubstr("the send CQ of fake0 overran (IBV_EVENT_CQ_ERR): completions were lost; 1 of 3 sizes ran"));
  ASSERT_EQ(o.sizes.size(), 1u);
}

// Issue 34 item 11: the target's own CQs and QPs are watched too. An error
// event on the target's QP during a bidirectional test ends the target's
// reverse sweep at once with the event named (the target's part of the
// result), instead of the target sweeping on with a broken QP.
TEST_F(Handler, AnErrorEventOnTheTargetsQpEndsItsReverseSweepWithTheEventNamed) {
  v1::SweepParams p;
  for (uint64_t s : {4096, 65536, 262144}) p.add_sizes_bytes(s);
  p.set_iterations(8);
  p.set_qps(1);
  p.set_bidirectional(true);
  target_error_after_size_ = 1;
  Outcome o = Run(p);
  ASSERT_TRUE(o.verify_status.ok()) << o.verify_status;
  ASSERT_EQ(o.verify.reverse_sizes_size(), 2);
  EXPECT_EQ(o.verify.reverse_sizes(0).status(), v1::RESULT_STATUS_OK) << o.verify.reverse_sizes(0).error();
  const v1::SizeResult& cut = o.verify.reverse_sizes(1);
  EXPECT_NE(cut.status(), v1::RESULT_STATUS_OK);
  EXPECT_EQ(cut.size_bytes(), 65536u);
  EXPECT_EQ(cut.error(), absl::StrCat("target side: ", kTargetQpFatal, "; 1 of 3 sizes ran"));
  // The initiator's side of the same test fails at the next barrier, its
  // peer gone from the sweep.
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_THAT(o.summary.error(), HasSubstr("the peer ended its sweep"));
}

TEST_F(Handler, OutOfBandBidirectionalIsVerifiedBothWays) {
  v1::SweepParams p;
  for (uint64_t s : {4096, 65536}) p.add_sizes_bytes(s);
  p.set_iterations(4);
  p.set_tx_depth(2);
  p.set_bidirectional(true);
  p.set_verify(true);
  Outcome o = Run(p);
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_OK) << o.summary.error();
  ASSERT_EQ(o.summary.reverse_checks_size(), 2);
  for (const auto& c : o.summary.reverse_checks()) EXPECT_TRUE(c.verified()) << c.error();
  ASSERT_TRUE(o.verify_status.ok()) << o.verify_status;
  EXPECT_EQ(o.verify.reverse_sizes_size(), 2);
  for (const auto& s : o.verify.sizes()) EXPECT_TRUE(s.verified());
}

TEST_F(Handler, WriteLatencyStreamsPerftestsStatisticsPerSize) {
  v1::SweepParams p;
  p.set_test(v1::TEST_KIND_WRITE_LAT);
  for (uint64_t s : {2, 256}) p.add_sizes_bytes(s);
  p.set_iterations(30);
  Outcome o = Run(p);
  EXPECT_EQ(o.summary.status(), v1::RESULT_STATUS_OK) << o.summary.error();
  EXPECT_THAT(o.summary.perftest_command(), HasSubstr("ib_write_lat"));
  ASSERT_EQ(o.sizes.size(), 2u);
  for (const auto& s : o.sizes) {
    EXPECT_TRUE(s.has_latency());
    EXPECT_EQ(s.latency().samples(), 27u);
    EXPECT_GT(s.latency().t_typical_us(), 0);
    EXPECT_THAT(s.perftest_command(), HasSubstr("-I 220"));
  }
}

TEST_F(Handler, WriteLatencyRefusesGpuMemoryAndBadShapes) {
  v1::OpenTargetRequest open;
  open.set_device("fake1");
  v1::SweepParams& p = *open.mutable_params();
  p.set_test(v1::TEST_KIND_WRITE_LAT);
  p.add_sizes_bytes(2);
  p.set_memory("gpu:0");
  auto r = handler_.OpenTarget(open);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cannot read GPU memory"));
  p.set_memory("host");
  p.set_qps(2);
  r = handler_.OpenTarget(open);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("one QP"));
  p.set_qps(1);
  p.set_bidirectional(true);
  r = handler_.OpenTarget(open);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("ping-pong"));
}

// Both ports' counters around a whole test: the initiator's around its sweep
// (SweepSummary.counters), the target's from OpenTarget to CloseTarget (its
// answer). The agent reads them through its --fs-root; the kernel's counting
// is played by the test, which writes the files while the sweep runs (names
// from rxe_hw_counters.c, tests/testdata/counters/README.md).
class CountedHandler : public ::testing::Test {
 protected:
  CountedHandler() {
    char tmpl[] = "/tmp/gdrbench-counters-XXXXXX";
    root_ = mkdtemp(tmpl);
    for (const char* dev : {"fake0", "fake1"}) {
      std::filesystem::create_directories(Dir(dev));
      for (const char* f : {"rcvd_seq_err", "duplicate_request", "link_downed"}) Write(dev, f, 0);
      Write(dev, "sent_pkts", 100);
      Write(dev, "rcvd_pkts", 100);
    }
  }
  ~CountedHandler() override { std::filesystem::remove_all(root_); }
  std::string Dir(const std::string& dev) {
    return root_ + "/sys/class/infiniband/" + dev + "/ports/1/hw_counters/";
  }
  void Write(const std::string& dev, const std::string& file, uint64_t v) {
    std::ofstream(Dir(dev) + file) << v << "\n";
  }
  // fake0's out-of-band sweep into `target`, connected through ConnectTarget
  // as the controller does; `on_message` sees every answer of the sweep.
  absl::Status SweepInto(AgentHandler& handler, const v1::OpenTargetResponse& target,
                         const v1::SweepParams& params,
                         const std::function<void(const v1::RunWriteSweepResponse&)>& on_message) {
    v1::RunWriteSweepRequest sweep;
    sweep.set_device("fake0");
    sweep.set_target_id(target.target_id());
    *sweep.mutable_remote_buffers() = target.buffers();
    *sweep.mutable_params() = params;
    *sweep.mutable_target_oob() = target.oob();
    std::atomic<bool> cancelled{false};
    return handler.RunWriteSweep(
        sweep,
        [&](const v1::RunWriteSweepResponse& m) {
          if (m.has_connect()) {
            v1::ConnectTargetRequest c;
            c.set_target_id(target.target_id());
            *c.mutable_initiator() = m.connect();
            EXPECT_TRUE(handler.ConnectTarget(c).ok());
          }
          on_message(m);
          return true;
        },
        cancelled);
  }
  std::string root_;
  std::shared_ptr<FakeSessionFactory> factory_ = std::make_shared<FakeSessionFactory>();
};

TEST_F(CountedHandler, BothPortsCountersAroundATestCarryTheirDeltas) {
  AgentHandler handler(AgentConfig{.fs_root = root_, .devices = {}}, factory_);
  v1::SweepParams params;
  params.add_sizes_bytes(4096);
  params.add_sizes_bytes(65536);
  params.set_iterations(4);
  params.set_cm(v1::CONNECTION_MODE_OOB);
  v1::OpenTargetRequest open;
  open.set_device("fake1");
  *open.mutable_params() = params;
  auto target = handler.OpenTarget(open);
  ASSERT_TRUE(target.ok()) << target.status();
  v1::SweepSummary summary;
  ASSERT_TRUE(SweepInto(handler, *target, params, [&](const v1::RunWriteSweepResponse& m) {
                if (m.has_size() && m.size().size_bytes() == 4096) {
                  Write("fake0", "rcvd_seq_err", 7);
                  Write("fake0", "sent_pkts", 600);
                  Write("fake1", "duplicate_request", 3);
                  Write("fake1", "link_downed", 1);
                }
                if (m.has_summary()) summary = m.summary();
              }).ok());
  ASSERT_EQ(summary.status(), v1::RESULT_STATUS_OK) << summary.error();
  const v1::PortCounters& src = summary.counters();
  EXPECT_EQ(src.device(), "fake0");
  EXPECT_EQ(src.port(), 1u);
  EXPECT_EQ(src.compared(), 5u);
  EXPECT_EQ(src.packets(), 500u);
  ASSERT_EQ(src.changes_size(), 2);  // in file order: rcvd_seq_err, sent_pkts
  EXPECT_EQ(src.changes(0).name(), "hw_counters/rcvd_seq_err");
  EXPECT_EQ(src.changes(0).kind(), v1::COUNTER_KIND_RETRANSMIT);
  EXPECT_EQ(src.changes(0).delta(), 7u);
  EXPECT_EQ(src.changes(1).name(), "hw_counters/sent_pkts");

  // A counter that vanishes before the close is said, not taken as 0.
  std::filesystem::remove(Dir("fake1") + "rcvd_pkts");
  v1::CloseTargetRequest close;
  close.set_target_id(target->target_id());
  auto closed = handler.CloseTarget(close);
  ASSERT_TRUE(closed.ok()) << closed.status();
  const v1::PortCounters& dst = closed->counters();
  EXPECT_EQ(dst.device(), "fake1");
  EXPECT_EQ(dst.compared(), 4u);
  std::map<std::string, const v1::CounterChange*> by_name;
  for (const auto& c : dst.changes()) by_name[c.name()] = &c;
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["hw_counters/duplicate_request"]->delta(), 3u);
  EXPECT_EQ(by_name["hw_counters/link_downed"]->kind(), v1::COUNTER_KIND_LINK);
  EXPECT_EQ(by_name["hw_counters/link_downed"]->delta(), 1u);
  EXPECT_EQ(by_name["hw_counters/rcvd_pkts"]->note(), "read 100 before the test, absent after it");
}

// A target opened ahead of its test (the controller opens the next round's
// while this round's data moves, possibly on the same port) counts from its
// initiator's connection: what the port counted before that was another
// test's.
TEST_F(CountedHandler, ATargetOpenedAheadCountsFromItsInitiatorsConnection) {
  AgentHandler handler(AgentConfig{.fs_root = root_, .devices = {}}, factory_);
  v1::SweepParams params;
  params.add_sizes_bytes(4096);
  params.set_iterations(4);
  params.set_cm(v1::CONNECTION_MODE_OOB);
  v1::OpenTargetRequest open;
  open.set_device("fake1");
  *open.mutable_params() = params;
  auto target = handler.OpenTarget(open);
  ASSERT_TRUE(target.ok()) << target.status();
  // The test before, on the same port, still moving data.
  Write("fake1", "duplicate_request", 40);
  Write("fake1", "sent_pkts", 900);
  ASSERT_TRUE(SweepInto(handler, *target, params, [&](const v1::RunWriteSweepResponse& m) {
                if (m.has_size()) Write("fake1", "duplicate_request", 43);  // this test's own
              }).ok());
  v1::CloseTargetRequest close;
  close.set_target_id(target->target_id());
  auto closed = handler.CloseTarget(close);
  ASSERT_TRUE(closed.ok()) << closed.status();
  std::map<std::string, uint64_t> delta;
  for (const auto& c : closed->counters().changes()) delta[c.name()] = c.delta();
  EXPECT_EQ(delta["hw_counters/duplicate_request"], 3u);
  EXPECT_EQ(delta.count("hw_counters/sent_pkts"), 0u) << "the test before's packets counted";
}

TEST_F(CountedHandler, APortWithoutCountersSaysSo) {
  std::filesystem::remove_all(root_ + "/sys");
  TargetRegistry registry([this](const std::string& d) { return CheckDevice(*factory_, {}, d); },
                          factory_, TargetLimits{}, nullptr, false,
                          [this](const std::string& dev, uint32_t port) {
                            return counters::ReadPort(FsRoot(root_), dev, port,
                                                      counters::TestCounters());
                          });
  auto t = registry.Open(OobOpen());
  ASSERT_TRUE(t.ok()) << t.status();
  auto closed = registry.Close(t->target_id());
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_THAT(closed->counters().absent(), HasSubstr("no error counters in sysfs for fake1 port 1"));
}

}  // namespace
}  // namespace gdrbench::agent::service

namespace gdrbench::agent::service {
namespace {

// gpu-staged (issue 11 item 3): the staging copy RunSweep timed reaches the
// size's result (SizeResult 13-15); other kinds leave the fields at zero.
TEST(SweepConvert, TheStagingCopyOfASizeReachesItsResult) {
  bench::SizeOutcome o;
  o.size_bytes = 65536;
  o.ok = true;
  o.bw_avg_gbps = 90;
  o.staged = true;
  o.staged_copies = 8;
  o.staged_copy_gbytes_per_s = 7.33;
  o.staged_bw_avg_gbps = 35.5;
  v1::SizeResult r;
  ToProto(o, &r);
  EXPECT_EQ(r.bw_avg_gbps(), 90);
  EXPECT_EQ(r.staged_copies(), 8u);
  EXPECT_EQ(r.staged_copy_gbytes_per_s(), 7.33);
  EXPECT_EQ(r.staged_bw_avg_gbps(), 35.5);
  o.staged = false;
  v1::SizeResult plain;
  ToProto(o, &plain);
  EXPECT_EQ(plain.staged_copies(), 0u);
  EXPECT_EQ(plain.staged_bw_avg_gbps(), 0);
}

}  // namespace
}  // namespace gdrbench::agent::service
