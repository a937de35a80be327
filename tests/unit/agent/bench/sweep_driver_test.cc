// The initiator's test sequence (sweep_driver.h) on the fake NIC, without
// protobuf: the sink's steps in order, a whole bidirectional verified test,
// a session that cannot open, a port that goes down mid-sweep, and a caller
// that goes away during the out-of-band exchange.
#include "agent/bench/sweep_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "agent/bench/oob_session.h"
#include "tests/unit/agent/bench/fake_sessions.h"

namespace gdrbench::agent::bench {
namespace {

using ::testing::ElementsAre;
using testing::FakeRoceDevice;
using testing::FakeSessionFactory;
using ::testing::HasSubstr;

SweepOptions Bw(std::vector<uint64_t> sizes, bool bidi, bool verify) {
  SweepOptions o;
  o.sizes_bytes = std::move(sizes);
  o.iterations = 20;
  o.warmup_iterations = 2;
  o.qps = 1;
  o.tx_depth = 16;
  o.cq_moderation = 1;
  o.bidirectional = bidi;
  o.verify = verify;
  o.seed = 11;
  return o;
}

// Records every step; Connect hands the initiator's half to the target, as
// the controller's ConnectTarget does.
class RecordingSink final : public SweepSink {
 public:
  explicit RecordingSink(TargetSession* target) : target_(target) {}
  bool Connect(const OobPeer& me, const std::string& gid_choice) override {
    steps.push_back("connect");
    this->gid_choice = gid_choice;
    if (!accept_connect) return false;
    absl::Status st = target_->Connect(me);
    EXPECT_TRUE(st.ok()) << st;
    return true;
  }
  void Connected(const InitiatorSession& in) override {
    steps.push_back("connected");
    path = in.path();
  }
  bool Size(const SizeOutcome& o) override {
    steps.push_back("size");
    sizes.push_back(o);
    if (on_size) on_size();
    return true;
  }
  void Measured() override { steps.push_back("measured"); }
  void Finished(const SweepOutcome& o) override {
    steps.push_back("finished");
    outcome = o;
  }

  bool accept_connect = true;
  std::function<void()> on_size;
  std::vector<std::string> steps;
  std::string gid_choice;
  verbs::PathInfo path;
  std::vector<SizeOutcome> sizes;
  SweepOutcome outcome;

 private:
  TargetSession* target_;
};

// A target on fake1 whose worker accepts and runs its side, as the agent's
// TargetRegistry does, and the initiator's spec against it.
struct Target {
  std::unique_ptr<TargetSession> session;
  std::vector<SizeOutcome> reverse;
  std::atomic<bool> stop{false};
  std::thread worker;

  ~Target() {
    stop = true;
    if (worker.joinable()) worker.join();
  }
  void Start() {
    worker = std::thread([this] {
      if (session->Accept(stop, 5000).ok())
        session->Run(stop, [&](const SizeOutcome& s) { reverse.push_back(s); });
    });
  }
};

InitiatorSpec OpenPair(FakeSessionFactory& f, const SweepOptions& o, Target& t) {
  TargetSpec ts{.device = FakeRoceDevice("fake1", 2),
                .bind_address = "",
                .memory = {},
                .options = o,
                .slice_bytes = TargetSliceBytes(PlanLayout(o), 0),
                .cm = CmMode::kOob};
  auto opened = f.OpenTarget(ts);
  EXPECT_TRUE(opened.ok()) << opened.status();
  t.session = std::move(*opened);
  const TargetOpened& op = t.session->opened();
  return InitiatorSpec{.device = FakeRoceDevice("fake0", 1),
                       .bind_address = "",
                       .memory = {},
                       .options = o,
                       .cm = CmMode::kOob,
                       .remote = op.slices,
                       .target_address = "",
                       .target_port = 0,
                       .target = op.oob,
                       .timeout_ms = 2000};
}

TEST(SweepDriver, ABidirectionalVerifiedTestRunsEveryStepInOrder) {
  FakeSessionFactory f;
  Target t;
  const SweepOptions o = Bw({4096, 65536}, true, true);
  InitiatorSpec spec = OpenPair(f, o, t);
  t.Start();
  RecordingSink sink(t.session.get());
  std::atomic<bool> cancelled{false};
  BackgroundJobs background;
  DriveInitiatorSweep(f, spec, cancelled, sink, background);
  EXPECT_THAT(sink.steps, ElementsAre("connect", "connected", "size", "size", "measured", "finished"));
  EXPECT_THAT(sink.gid_choice, HasSubstr("10.0.0.1"));
  EXPECT_EQ(sink.path.gid_index, 1);
  const SweepOutcome& out = sink.outcome;
  EXPECT_EQ(out.end, SweepEnd::kOk) << out.error;
  EXPECT_EQ(out.sizes_ran, 2u);
  EXPECT_TRUE(out.sizes_in_lockstep);
  EXPECT_EQ(out.total_bytes, 20u * 4096 + 20u * 65536);
  EXPECT_GT(out.total_ns, 0);
  ASSERT_EQ(sink.sizes.size(), 2u);
  EXPECT_DOUBLE_EQ(out.bw_avg_gbps_best, std::max(sink.sizes[0].bw_avg_gbps, sink.sizes[1].bw_avg_gbps));
  ASSERT_EQ(out.reverse_checks.size(), 2u);
  for (const ReverseCheck& c : out.reverse_checks) EXPECT_TRUE(c.verified) << c.size_bytes << ": " << c.error;
  EXPECT_FALSE(out.caller_gone);
}

TEST(SweepDriver, ASessionThatCannotOpenIsNotRunWithTheReason) {
  FakeSessionFactory f;
  InitiatorSpec spec;
  spec.device = FakeRoceDevice("fake0", 1);
  spec.options = Bw({4096}, false, false);
  spec.cm = CmMode::kRdmaCm;
  spec.target_address = "10.0.0.2";
  spec.target_port = 7471;
  RecordingSink sink(nullptr);
  std::atomic<bool> cancelled{false};
  BackgroundJobs background;
  DriveInitiatorSweep(f, spec, cancelled, sink, background);
  EXPECT_THAT(sink.steps, ElementsAre("finished"));
  EXPECT_EQ(sink.outcome.end, SweepEnd::kNotRun);
  EXPECT_EQ(sink.outcome.error, "the fake fabric has no rdma_cm");
}

TEST(SweepDriver, APortThatGoesDownFailsTheTestNamingTheFault) {
  FakeSessionFactory f;
  Target t;
  const SweepOptions o = Bw({4096, 8192, 65536}, false, false);
  InitiatorSpec spec = OpenPair(f, o, t);
  t.Start();
  RecordingSink sink(t.session.get());
  sink.on_size = [&f] { f.RaisePortDown(); };  // after the first size
  std::atomic<bool> cancelled{false};
  BackgroundJobs background;
  DriveInitiatorSweep(f, spec, cancelled, sink, background);
  EXPECT_EQ(sink.steps.back(), "finished");
  EXPECT_EQ(sink.outcome.end, SweepEnd::kFailed);
  EXPECT_THAT(sink.outcome.error, HasSubstr("port 1 of fake0 went down (IBV_EVENT_PORT_ERR); "));
  EXPECT_THAT(sink.outcome.error, HasSubstr(" of 3 sizes ran"));
  EXPECT_LT(sink.outcome.sizes_ran, 3u);
}

TEST(SweepDriver, ACallerGoneDuringTheExchangeEndsWithoutAnOutcome) {
  FakeSessionFactory f;
  Target t;
  InitiatorSpec spec = OpenPair(f, Bw({4096}, false, false), t);
  RecordingSink sink(t.session.get());
  sink.accept_connect = false;
  std::atomic<bool> cancelled{false};
  BackgroundJobs background;
  DriveInitiatorSweep(f, spec, cancelled, sink, background);
  EXPECT_THAT(sink.steps, ElementsAre("connect"));
}

}  // namespace
}  // namespace gdrbench::agent::bench
