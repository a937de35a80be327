// A test's own CQ and QP errors (issue 34, item 11): which async events end
// a test and how they are named, and the watch's life without a device (the
// real events need a NIC: the lab).
#include "agent/verbs/data_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <thread>

namespace gdrbench::agent::verbs {
namespace {

using ::testing::HasSubstr;

struct Objects {
  ibv_cq send{}, recv{}, other_cq{};
  ibv_qp qp0{}, qp1{}, other_qp{};
  DataObjects data;
  Objects() {
    qp0.qp_num = 0x11;
    qp1.qp_num = 0x12;
    data.device = "mlx5_3";
    data.send_cq = &send;
    data.recv_cq = &recv;
    data.qps = {&qp0, &qp1};
  }
};

TEST(DataEventFault, ErrorsOnTheTestsOwnObjectsAreNamed) {
  Objects o;
  EXPECT_EQ(DataEventFault(IBV_EVENT_CQ_ERR, &o.send, o.data),
            "the send CQ of mlx5_3 overran (IBV_EVENT_CQ_ERR): completions were lost, the test cannot count "
            "its WRITEs");
  EXPECT_THAT(DataEventFault(IBV_EVENT_CQ_ERR, &o.recv, o.data), HasSubstr("the receive CQ of mlx5_3"));
  EXPECT_EQ(DataEventFault(IBV_EVENT_QP_FATAL, &o.qp1, o.data),
            "QP 18 (2 of 2) on mlx5_3 failed (IBV_EVENT_QP_FATAL): the NIC moved it to the error state");
  EXPECT_THAT(DataEventFault(IBV_EVENT_QP_REQ_ERR, &o.qp0, o.data), HasSubstr("QP 17 (1 of 2)"));
  EXPECT_THAT(DataEventFault(IBV_EVENT_QP_ACCESS_ERR, &o.qp0, o.data), HasSubstr("IBV_EVENT_QP_ACCESS_ERR"));
}

TEST(DataEventFault, AnotherTestsObjectsAndHarmlessEventsAreNot) {
  Objects o;
  EXPECT_EQ(DataEventFault(IBV_EVENT_CQ_ERR, &o.other_cq, o.data), "");
  EXPECT_EQ(DataEventFault(IBV_EVENT_QP_FATAL, &o.other_qp, o.data), "");
  EXPECT_EQ(DataEventFault(IBV_EVENT_COMM_EST, &o.qp0, o.data), "");
  EXPECT_EQ(DataEventFault(IBV_EVENT_QP_LAST_WQE_REACHED, &o.qp0, o.data), "");
  EXPECT_EQ(DataEventFault(IBV_EVENT_CQ_ERR, nullptr, o.data), "");
}

TEST(DataEvents, AWatchWithoutAContextStopsOnCancelAndLeavesAtOnce) {
  DataEvents events;
  std::atomic<bool> cancelled{false};
  auto w = events.Watch(DataObjects{}, cancelled);
  EXPECT_FALSE(w->stop());
  cancelled = true;
  const auto t0 = std::chrono::steady_clock::now();
  while (!w->stop() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(w->stop());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_EQ(w->fault(), "");
  // Removal waits for the thread's poll to end (it must not read a context
  // its test is about to destroy), woken at once: never a hang.
  const auto r0 = std::chrono::steady_clock::now();
  w.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - r0, std::chrono::seconds(1));
}

}  // namespace
}  // namespace gdrbench::agent::verbs
