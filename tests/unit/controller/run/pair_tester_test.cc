// The one pair tester used by `gdrbench pair` and by every test of a sweep:
// the protocol sequence and how each failure becomes data. The cases where
// the two used to behave differently are pinned here (see the comments).
#include "controller/run/pair_tester.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

namespace gdrbench::controller::run {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An agent whose every answer is set by the test; records the calls.
class ScriptedAgent final : public AgentApi {
 public:
  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return v1::NodeInfo(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest&) override {
    return v1::PreflightReport();
  }
  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* out) override {
    calls.push_back("OpenTarget");
    open = r;
    if (!open_status.ok()) return open_status;
    v1::OpenTargetResponse resp;
    resp.set_target_id("t1");
    resp.set_address("10.0.0.2");
    resp.set_cm_port(7471);
    resp.set_memory_kind("gpu");
    resp.set_registration("ibv_reg_dmabuf_mr");
    resp.add_buffers()->set_rkey(9);
    if (oob) {
      resp.set_cm(v1::CONNECTION_MODE_OOB);
      resp.mutable_oob()->add_qps()->set_qpn(0x11);
      resp.mutable_oob()->set_roce(true);
    } else {
      resp.set_cm(v1::CONNECTION_MODE_RDMA_CM);
    }
    *out = std::move(resp);
    return absl::OkStatus();
  }
  absl::Status ConnectTarget(const v1::ConnectTargetRequest& r) override {
    calls.push_back("ConnectTarget " + r.target_id());
    connect = r;
    return connect_status;
  }
  absl::Status RunWriteSweep(
      const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
      const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    calls.push_back("RunWriteSweep");
    sweep = r;
    sweep_timeout = timeout;
    delivered = 0;
    for (const auto& m : stream) {
      ++delivered;
      v1::RunWriteSweepResponse handed = m;  // the consumer may take its parts
      if (!on_message(handed)) return absl::CancelledError("stopped by the controller");
    }
    return sweep_status;
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest&) override {
    calls.push_back("VerifyTarget");
    if (!verify_status.ok()) return verify_status;
    return verify;
  }
  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    calls.push_back("CloseTarget " + id);
    if (!close_status.ok()) return close_status;
    return close;
  }

  std::vector<std::string> calls;
  bool oob = false;
  v1::ConnectTargetRequest connect;
  absl::Status connect_status;
  v1::OpenTargetRequest open;
  v1::RunWriteSweepRequest sweep;
  std::chrono::milliseconds sweep_timeout{0};
  absl::Status open_status, sweep_status, verify_status, close_status;
  v1::CloseTargetResponse close;
  std::vector<v1::RunWriteSweepResponse> stream;
  size_t delivered = 0;  // messages handed to the callback before it stopped the stream
  v1::VerifyTargetResponse verify;
};

v1::RunWriteSweepResponse Size(uint64_t bytes, double gbps, v1::ResultStatus st = v1::RESULT_STATUS_OK,
                               const std::string& error = "") {
  v1::RunWriteSweepResponse m;
  m.mutable_size()->set_size_bytes(bytes);
  m.mutable_size()->set_bw_avg_gbps(gbps);
  m.mutable_size()->set_status(st);
  m.mutable_size()->set_error(error);
  return m;
}

v1::RunWriteSweepResponse Summary(v1::ResultStatus st = v1::RESULT_STATUS_OK,
                                  const std::string& error = "") {
  v1::RunWriteSweepResponse m;
  m.mutable_summary()->set_status(st);
  m.mutable_summary()->set_error(error);
  m.mutable_summary()->set_memory_kind("gpu");
  m.mutable_summary()->set_registration("peermem");
  return m;
}

v1::SweepParams Params(bool verify = false) {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.add_sizes_bytes(1 << 20);
  p.set_iterations(100);
  p.set_qps(2);
  p.set_verify(verify);
  p.set_seed(7);
  return p;
}

class PairTest : public ::testing::Test {
 protected:
  absl::Status Run(const v1::SweepParams& p, bool bidirectional = false) {
    PairSide init{&client, "nodeA", "mlx5_0", "10.0.0.1", "gpu:0"};
    PairSide target{&server, "nodeB", "mlx5_1", "10.0.0.2", "gpu:1"};
    return RunPairTest(init, target, p, bidirectional, options, &result);
  }
  void OkStream() { client.stream = {Size(65536, 90), Size(1 << 20, 95), Summary()}; }

  ScriptedAgent client, server;
  PairTestOptions options;
  v1::PairResult result;
};

TEST_F(PairTest, RunsTheSequenceAndRecordsWhatEachSideReallyUsed) {
  OkStream();
  options.sweep_timeout = std::chrono::milliseconds(5000);
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << result.reason();
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "CloseTarget t1"));
  EXPECT_THAT(client.calls, ElementsAre("RunWriteSweep"));
  // The target gets the largest size as its buffer floor, its own memory and
  // address; the lease outlives the sweep's deadline by 60 s.
  EXPECT_EQ(server.open.buffer_bytes(), 1u << 20);
  EXPECT_EQ(server.open.params().memory(), "gpu:1");
  EXPECT_EQ(server.open.bind_address(), "10.0.0.2");
  EXPECT_EQ(server.open.device(), "mlx5_1");
  EXPECT_EQ(server.open.params().qps(), 2u);
  EXPECT_EQ(server.open.lease_ns(), 65'000'000'000LL);
  EXPECT_EQ(client.sweep.params().memory(), "gpu:0");
  EXPECT_EQ(client.sweep.bind_address(), "10.0.0.1");
  EXPECT_EQ(client.sweep.target_id(), "t1");
  EXPECT_EQ(client.sweep.remote_buffers(0).rkey(), 9u);
  EXPECT_EQ(client.sweep_timeout.count(), 5000);
  EXPECT_EQ(result.sizes_size(), 2);
  EXPECT_EQ(result.dst().memory_kind(), "gpu");
  EXPECT_EQ(result.dst().registration(), "ibv_reg_dmabuf_mr");
  EXPECT_EQ(result.src().registration(), "peermem");
  EXPECT_GT(result.started_at().seconds(), 0);
}

TEST_F(PairTest, ARecycledResultsSummaryServesTheNextTestAndIsNeverLeftBehind) {
  // The runner recycles its result test after test (RecycleResult): the
  // next test's summary and start time are the spares, refilled, and a test
  // that never got a summary has none (not an empty one).
  OkStream();
  ASSERT_TRUE(Run(Params()).ok());
  const v1::SweepSummary* first = &result.summary();
  RecycleResult(&result);
  EXPECT_FALSE(result.has_summary());
  EXPECT_FALSE(result.has_started_at());
  result.Clear();
  client.stream = {Size(65536, 90), Size(1 << 20, 95), Summary(v1::RESULT_STATUS_OK, "")};
  client.stream.back().mutable_summary()->set_registration("ibv_reg_mr");
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(&result.summary(), first);  // the spare, not a new message
  EXPECT_EQ(result.summary().registration(), "ibv_reg_mr");
  EXPECT_EQ(result.summary().memory_kind(), "gpu");
  EXPECT_GT(result.started_at().seconds(), 0);
  RecycleResult(&result);
  result.Clear();
  server.open_status = absl::UnavailableError("connection refused");
  (void)Run(Params());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_FALSE(result.has_summary());
}

TEST_F(PairTest, BothPortsCountersLandInTheResultOnce) {
  OkStream();
  v1::PortCounters* src = client.stream.back().mutable_summary()->mutable_counters();
  src->set_device("mlx5_0");
  src->add_changes()->set_name("hw_counters/out_of_sequence");
  server.close.mutable_counters()->set_device("mlx5_1");
  server.close.mutable_counters()->set_absent("no error counters in sysfs for mlx5_1 port 1");
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.src_counters().device(), "mlx5_0");
  EXPECT_EQ(result.src_counters().changes(0).name(), "hw_counters/out_of_sequence");
  EXPECT_FALSE(result.summary().has_counters());  // moved, not copied
  EXPECT_EQ(result.dst_counters().device(), "mlx5_1");
  EXPECT_THAT(result.dst_counters().absent(), HasSubstr("mlx5_1 port 1"));
  // A failed close leaves the target's counters unknown, the test intact.
  server.close_status = absl::UnavailableError("gone");
  OkStream();
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK);
  EXPECT_FALSE(result.has_dst_counters());
}

// Issue 12, item 7: NaN passed ("2/2 cells pass"), +Inf passed, and 200,000
// results for a 2-size sweep were all kept.
TEST_F(PairTest, ImpossibleAnswersAreTheTestsErrorNotItsResult) {
  v1::RunWriteSweepResponse nan = Size(65536, std::nan(""));
  v1::RunWriteSweepResponse inf = Size(65536, HUGE_VAL);
  for (const auto& bad : {nan, inf, Size(65536, -1), Size(65536, 5000)}) {
    client.stream = {bad, Size(1 << 20, 95), Summary()};
    ASSERT_TRUE(Run(Params()).ok());
    EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR) << result.reason();
    EXPECT_THAT(result.reason(), HasSubstr("the agent answered the impossible"));
    EXPECT_EQ(result.sizes_size(), 0);
    EXPECT_EQ(client.delivered, 1u);  // the stream stopped at the first bad answer
  }
  // With the link rate known, the ceiling is the link's (x 1.25).
  client.stream = {Size(65536, 90), Size(1 << 20, 130), Summary()};
  result.set_expected_gbps(100);
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_THAT(result.reason(), HasSubstr("above what the link can carry (125.0 Gb/s)"));
}

TEST_F(PairTest, AStreamOfSizesNotAskedForIsCutAtTheFirst) {
  client.stream.clear();
  for (int i = 0; i < 200'000; ++i) client.stream.push_back(Size(65536, 90));
  client.stream.push_back(Summary());
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_THAT(result.reason(), HasSubstr("65536 B, a size not asked for or already answered"));
  EXPECT_EQ(result.sizes_size(), 0);
  EXPECT_EQ(client.delivered, 2u);  // 65536 once is fine; the second one stops the stream
}

TEST_F(PairTest, AGivenLeaseIsUsed) {
  OkStream();
  options.lease = std::chrono::milliseconds(8000);
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(server.open.lease_ns(), 8'000'000'000LL);
}

// pair used to exit before printing anything; both now make it data and
// return the agent's status, so `gdrbench pair` still exits 2 for it.
TEST_F(PairTest, ARefusedOpenTargetIsAnErrorCellAndReturnsTheAgentsStatus) {
  server.open_status = absl::InvalidArgumentError("tx depth 20000 outside 1 .. 8192");
  absl::Status st = Run(Params());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(result.reason(), "OpenTarget on nodeB: tx depth 20000 outside 1 .. 8192");
  EXPECT_TRUE(client.calls.empty());
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget"));  // nothing opened, nothing to close
}

// The real agent client begins its messages with "<rpc> on <address>: "
// (agent_api.h); the reason says the RPC once (it said "OpenTarget on nodeB:
// OpenTarget on 10.0.0.2:7470: ...").
TEST_F(PairTest, AnAgentClientsMessageNamesItsRpcOnce) {
  server.open_status = absl::NotFoundError("OpenTarget on 10.0.0.2:7470: RDMA device 'mlx5_0' does not exist");
  (void)Run(Params());
  EXPECT_EQ(result.reason(), "nodeB: OpenTarget on 10.0.0.2:7470: RDMA device 'mlx5_0' does not exist");

  // `gdrbench pair` names the side by its address: the message as it is.
  server.open_status = absl::NotFoundError("OpenTarget on nodeB: RDMA device 'mlx5_0' does not exist");
  (void)Run(Params());
  EXPECT_EQ(result.reason(), "OpenTarget on nodeB: RDMA device 'mlx5_0' does not exist");

  server.open_status = absl::OkStatus();
  OkStream();
  client.sweep_status = absl::UnavailableError("RunWriteSweep on 10.0.0.1:7470: connection refused");
  (void)Run(Params());
  EXPECT_EQ(result.reason(), "nodeA: RunWriteSweep on 10.0.0.1:7470: connection refused");
}

// The requests are reused from test to test on a thread (every field set
// again, the params copied only for another plan's id): whatever ran before,
// a test's requests are the ones a fresh thread builds.
TEST_F(PairTest, ReusedRequestsCarryNothingOfTheTestBefore) {
  auto run_on = [&](bool fresh_thread, const v1::SweepParams& p, uint64_t params_id, bool bidirectional, bool oob) {
    server.oob = oob;
    OkStream();
    options.params_id = params_id;
    if (fresh_thread) {
      std::thread([&] { (void)Run(p, bidirectional); }).join();
    } else {
      (void)Run(p, bidirectional);
    }
    return std::pair{server.open, client.sweep};
  };
  v1::SweepParams other = Params(true);
  other.clear_sizes_bytes();
  other.add_sizes_bytes(4096);
  other.set_qps(1);
  other.set_cm(v1::CONNECTION_MODE_OOB);
  struct Case {
    v1::SweepParams params;
    uint64_t id;
    bool bidirectional, oob;
  };
  // Each case after the one before it on this thread, against a fresh thread.
  const std::vector<Case> cases = {{Params(), 7, true, true},    {other, 8, false, false},
                                   {other, 8, false, true},      {Params(), 0, true, false},
                                   {other, 0, false, false},     {Params(), 9, false, true}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    auto [open, sweep] = run_on(false, c.params, c.id, c.bidirectional, c.oob);
    auto [fresh_open, fresh_sweep] = run_on(true, c.params, c.id, c.bidirectional, c.oob);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(open, fresh_open))
        << "case " << i << ":\n" << open.DebugString() << "fresh:\n" << fresh_open.DebugString();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(sweep, fresh_sweep))
        << "case " << i << ":\n" << sweep.DebugString() << "fresh:\n" << fresh_sweep.DebugString();
    EXPECT_EQ(open.params().sizes_bytes_size(), c.params.sizes_bytes_size()) << "case " << i;
    EXPECT_EQ(sweep.has_target_oob(), c.oob) << "case " << i;
  }
}

TEST_F(PairTest, ASweepPastItsDeadlineFailsAndTheTargetIsStillClosed) {
  client.stream = {Size(65536, 90)};
  client.sweep_status = absl::DeadlineExceededError("deadline exceeded after 120000 ms");
  absl::Status st = Run(Params());
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_THAT(result.reason(), HasSubstr("RunWriteSweep on nodeA: deadline exceeded"));
  EXPECT_EQ(result.sizes_size(), 1);  // what arrived is kept
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "CloseTarget t1"));
}

TEST_F(PairTest, AStreamWithoutSummaryIsAnError) {
  client.stream = {Size(65536, 90)};
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(result.reason(), "RunWriteSweep on nodeA: the stream ended without a summary");
}

TEST_F(PairTest, AFailedSummaryKeepsItsStatusAndNamesBothSides) {
  client.stream = {Summary(v1::RESULT_STATUS_FAILED, "transport retry counter exceeded")};
  ASSERT_TRUE(Run(Params(true)).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(result.reason(), "nodeA->nodeB: transport retry counter exceeded");
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "CloseTarget t1"));  // no verify of a failed sweep
}

// pair used to name only the sizes; the sweep only the first bad size.
// Now: every bad size, in both directions.
TEST_F(PairTest, EveryBadSizeIsListed) {
  client.stream = {Size(65536, 0, v1::RESULT_STATUS_FAILED, "IBV_WC_RETRY_EXC_ERR"),
                   Size(1 << 20, 0, v1::RESULT_STATUS_FAILED, ""), Summary()};
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(result.reason(), "nodeA->nodeB: 65536 B: IBV_WC_RETRY_EXC_ERR; 1048576 B: failed");
}

TEST_F(PairTest, AVerifyMismatchFailsTheSizeWithTheOffset) {
  OkStream();
  auto* ok = server.verify.add_sizes();
  ok->set_size_bytes(65536);
  ok->set_verified(true);
  auto* bad = server.verify.add_sizes();
  bad->set_size_bytes(1 << 20);
  bad->set_verified(false);
  bad->set_verify_first_bad_offset(4096);
  ASSERT_TRUE(Run(Params(true)).ok());
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "VerifyTarget", "CloseTarget t1"));
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(result.reason(), "nodeA->nodeB: 1048576 B: data mismatch: first bad byte at offset 4096");
  EXPECT_TRUE(result.sizes(0).verified());
  EXPECT_EQ(result.sizes(1).verify_first_bad_offset(), 4096u);
}

// pair used to fail every size of a bidirectional test without --verify
// when VerifyTarget said "not verified"; only a requested verify can fail.
TEST_F(PairTest, BidirectionalWithoutVerifyTakesTheReverseDirectionOnly) {
  OkStream();
  auto* unverified = server.verify.add_sizes();
  unverified->set_size_bytes(65536);
  unverified->set_verified(false);
  auto* rev = server.verify.add_reverse_sizes();
  rev->set_size_bytes(65536);
  rev->set_bw_avg_gbps(80);
  rev->set_status(v1::RESULT_STATUS_OK);
  ASSERT_TRUE(Run(Params(false), true).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << result.reason();
  EXPECT_TRUE(server.open.params().bidirectional());
  EXPECT_TRUE(client.sweep.params().bidirectional());
  ASSERT_EQ(result.reverse_sizes_size(), 1);
  EXPECT_EQ(result.reverse_sizes(0).bw_avg_gbps(), 80);
}

TEST_F(PairTest, AFailedReverseSizeFailsTheTest) {
  OkStream();
  auto* rev = server.verify.add_reverse_sizes();
  rev->set_size_bytes(65536);
  rev->set_status(v1::RESULT_STATUS_FAILED);
  rev->set_error("IBV_WC_REM_ACCESS_ERR");
  ASSERT_TRUE(Run(Params(), true).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(result.reason(), "nodeA->nodeB: 65536 B (reverse): IBV_WC_REM_ACCESS_ERR");
}

// The sweep used to report a failed VerifyTarget as "RunWriteSweep on ...".
TEST_F(PairTest, AFailedVerifyRpcIsAnErrorNamingVerifyTarget) {
  OkStream();
  server.verify_status = absl::UnavailableError("agent 10.0.0.2:7070 unreachable");
  absl::Status st = Run(Params(true));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(result.reason(), "VerifyTarget on nodeB: agent 10.0.0.2:7070 unreachable");
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "VerifyTarget", "CloseTarget t1"));
}

TEST_F(PairTest, AFailedCloseDoesNotFailAPassingTest) {
  OkStream();
  server.close_status = absl::NotFoundError("target t1 does not exist on this agent");
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK);
}

TEST_F(PairTest, EveryAnswerReachesTheHealthHook) {
  OkStream();
  std::vector<std::pair<bool, absl::StatusCode>> seen;
  PairSide init{&client, "a", "d0", "", "host"};
  PairSide target{&server, "b", "d1", "", "host"};
  ASSERT_TRUE(RunPairTest(init, target, Params(true), false, options, &result,
                          [&](bool is_target, const absl::Status& st) {
                            seen.emplace_back(is_target, st.code());
                          })
                  .ok());
  ASSERT_EQ(seen.size(), 4u);  // open, sweep, verify, close
  EXPECT_TRUE(seen[0].first);
  EXPECT_FALSE(seen[1].first);
  EXPECT_TRUE(seen[2].first);
  EXPECT_TRUE(seen[3].first);
}

// Out of band: the initiator's first message goes to the target's agent
// (ConnectTarget) while the stream is open; the sweep carries the target's
// QPs and the mode the target resolved.
TEST_F(PairTest, OutOfBandHandsTheInitiatorsHalfToTheTarget) {
  server.oob = true;
  v1::RunWriteSweepResponse connect;
  connect.mutable_connect()->mutable_initiator()->add_qps()->set_qpn(0x22);
  connect.mutable_connect()->set_target_gid_index(1);
  client.stream = {connect, Size(65536, 90), Size(1 << 20, 95), Summary()};
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << result.reason();
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "ConnectTarget t1", "CloseTarget t1"));
  EXPECT_EQ(server.connect.initiator().initiator().qps(0).qpn(), 0x22u);
  EXPECT_EQ(server.connect.initiator().target_gid_index(), 1u);
  EXPECT_EQ(client.sweep.params().cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(client.sweep.target_oob().qps(0).qpn(), 0x11u);
}

TEST_F(PairTest, ARefusedConnectTargetIsTheReason) {
  server.oob = true;
  server.connect_status = absl::InvalidArgumentError("GID index 9 is not populated on mlx5_1");
  v1::RunWriteSweepResponse connect;
  connect.mutable_connect()->set_target_gid_index(9);
  client.stream = {connect, Summary(v1::RESULT_STATUS_ERROR, "out-of-band connect: no 'ready'")};
  EXPECT_FALSE(Run(Params()).ok());  // the first RPC that failed: ConnectTarget
  EXPECT_EQ(result.status(), v1::RESULT_STATUS_ERROR);
  EXPECT_THAT(result.reason(), HasSubstr("ConnectTarget on nodeB: GID index 9"));
  EXPECT_THAT(server.calls, ElementsAre("OpenTarget", "ConnectTarget t1", "CloseTarget t1"));
}

TEST_F(PairTest, RdmaCmTargetsGetNoOutOfBandFields) {
  OkStream();
  ASSERT_TRUE(Run(Params()).ok());
  EXPECT_EQ(client.sweep.params().cm(), v1::CONNECTION_MODE_RDMA_CM);
  EXPECT_FALSE(client.sweep.has_target_oob());
}

}  // namespace
}  // namespace gdrbench::controller::run
