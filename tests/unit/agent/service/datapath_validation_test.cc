// Request validation of the data path RPCs: every bad request is
// INVALID_ARGUMENT with a sentence (or NOT_FOUND for unknown targets), before
// any hardware is touched, so these run on machines without RDMA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/service/agent_handler.h"

namespace gdrbench::agent::service {
namespace {

using ::testing::HasSubstr;

class DatapathValidation : public ::testing::Test {
 protected:
  AgentHandler handler_{AgentConfig{.fs_root = "/", .devices = {"rxe0"}}};

  static v1::OpenTargetRequest GoodOpen() {
    v1::OpenTargetRequest r;
    r.set_device("rxe0");
    r.mutable_params()->set_memory("host");
    r.mutable_params()->add_sizes_bytes(65536);
    r.mutable_params()->set_qps(1);
    return r;
  }
  static v1::RunWriteSweepRequest GoodSweep() {
    v1::RunWriteSweepRequest r;
    r.set_device("rxe0");
    r.set_target_address("10.0.0.2");
    r.set_target_cm_port(4000);
    auto* b = r.add_remote_buffers();
    b->set_addr(0x1000);
    b->set_rkey(7);
    b->set_length_bytes(1 << 20);
    r.mutable_params()->add_sizes_bytes(65536);
    return r;
  }
  void ExpectOpenInvalid(const v1::OpenTargetRequest& r, const char* words) {
    auto resp = handler_.OpenTarget(r);
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument) << resp.status();
    EXPECT_THAT(std::string(resp.status().message()), HasSubstr(words));
  }
  void ExpectSweepInvalid(const v1::RunWriteSweepRequest& r, const char* words) {
    int emitted = 0;
    std::atomic<bool> cancelled{false};
    absl::Status st = handler_.RunWriteSweep(
        r, [&](const v1::RunWriteSweepResponse&) { return ++emitted > 0; }, cancelled);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(words));
    EXPECT_EQ(emitted, 0) << "a rejected request must not stream results";
  }
};

TEST_F(DatapathValidation, OpenTargetRejectsEachBadField) {
  auto r = GoodOpen();
  r.mutable_params()->clear_sizes_bytes();
  ExpectOpenInvalid(r, "no message sizes");
  r = GoodOpen();
  r.mutable_params()->set_qps(1000);
  ExpectOpenInvalid(r, "qps 1000");
  r = GoodOpen();
  r.mutable_params()->set_memory("floppy");
  ExpectOpenInvalid(r, "floppy");
  r = GoodOpen();
  r.set_lease_ns(1);
  ExpectOpenInvalid(r, "lease");
  r = GoodOpen();
  r.set_device("");
  ExpectOpenInvalid(r, "no RDMA device");
  r = GoodOpen();
  r.set_device("mlx5_9");
  ExpectOpenInvalid(r, "does not own RDMA device 'mlx5_9'");
  r = GoodOpen();
  r.set_bind_address("not-an-ip");
  ExpectOpenInvalid(r, "not a numeric");
  r = GoodOpen();
  r.set_buffer_bytes(1ull << 40);
  ExpectOpenInvalid(r, "buffer_bytes");
  r = GoodOpen();
  r.mutable_params()->clear_sizes_bytes();
  r.mutable_params()->add_sizes_bytes(1 << 20);
  r.mutable_params()->add_sizes_bytes(2);
  ExpectOpenInvalid(r, "ascending");
}

TEST_F(DatapathValidation, RunWriteSweepRejectsEachBadField) {
  auto r = GoodSweep();
  r.clear_target_address();
  ExpectSweepInvalid(r, "target_address");
  r = GoodSweep();
  r.set_target_cm_port(0);
  ExpectSweepInvalid(r, "target_cm_port");
  r = GoodSweep();
  r.set_target_cm_port(70000);
  ExpectSweepInvalid(r, "target_cm_port");
  r = GoodSweep();
  r.mutable_params()->set_qps(2);
  ExpectSweepInvalid(r, "1 remote buffers for 2 QPs");
  r = GoodSweep();
  r.mutable_params()->set_iterations(10);
  r.mutable_params()->set_duration_ns(1'000'000'000);
  ExpectSweepInvalid(r, "exactly one");
  r = GoodSweep();
  r.mutable_params()->set_tx_depth(20000);
  ExpectSweepInvalid(r, "tx depth 20000");
  r = GoodSweep();
  r.mutable_params()->set_cq_moderation(200);
  ExpectSweepInvalid(r, "CQ moderation");
  r = GoodSweep();
  r.mutable_params()->set_memory("gpu:");
  ExpectSweepInvalid(r, "gpu:");
  r = GoodSweep();
  r.mutable_remote_buffers(0)->set_addr(0);
  ExpectSweepInvalid(r, "no address");
  r = GoodSweep();
  r.mutable_params()->clear_sizes_bytes();
  ExpectSweepInvalid(r, "no message sizes");
  r = GoodSweep();
  r.set_device("rxe7");
  ExpectSweepInvalid(r, "does not own");
}

TEST_F(DatapathValidation, UnknownTargetsAreNotFound) {
  v1::VerifyTargetRequest v;
  v.set_target_id("t42-rxe0");
  auto vr = handler_.VerifyTarget(v);
  EXPECT_EQ(vr.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(vr.status().message()), HasSubstr("lease"));
  v1::CloseTargetRequest c;
  c.set_target_id("t42-rxe0");
  EXPECT_EQ(handler_.CloseTarget(c).status().code(), absl::StatusCode::kNotFound);
  c.clear_target_id();
  EXPECT_EQ(handler_.CloseTarget(c).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gdrbench::agent::service
