// agent/verbs/port_events: which asynchronous events end a test, and the
// watch's flag following the caller's cancellation. The event codes are
// rdma-core's <infiniband/verbs.h> (enum ibv_event_type), the ones the kernel
// raises for a port that loses its link (IB_EVENT_PORT_ERR, dispatched to
// every open context of the device by ib_uverbs; rxe raises it from
// rxe_port_down when its netdev goes down).
#include "agent/verbs/port_events.h"

#include <infiniband/verbs.h>

#include <chrono>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::verbs {
namespace {

TEST(PortEvents, APortErrorOnTheTestsPortIsAFault) {
  EXPECT_EQ(EventFault(IBV_EVENT_PORT_ERR, 1, "mlx5_0", 1), "port 1 of mlx5_0 went down (IBV_EVENT_PORT_ERR)");
  EXPECT_EQ(EventFault(IBV_EVENT_PORT_ERR, 2, "mlx5_0", 1), "");  // another port of the device
  EXPECT_EQ(EventFault(IBV_EVENT_PORT_ACTIVE, 1, "mlx5_0", 1), "");
  EXPECT_EQ(EventFault(IBV_EVENT_GID_CHANGE, 0, "mlx5_0", 1), "");
  EXPECT_THAT(EventFault(IBV_EVENT_DEVICE_FATAL, 0, "mlx5_0", 1),
              ::testing::HasSubstr("mlx5_0 failed (IBV_EVENT_DEVICE_FATAL)"));
  EXPECT_STREQ(AsyncEventName(IBV_EVENT_PORT_ERR), "IBV_EVENT_PORT_ERR");
  EXPECT_STREQ(AsyncEventName(IBV_EVENT_LID_CHANGE), "IBV_EVENT_LID_CHANGE");
  EXPECT_STREQ(AsyncEventName(999), "an unknown event");
}

TEST(PortEvents, CancelOnlyIsTheCallersFlag) {
  std::atomic<bool> cancelled{false};
  auto w = CancelOnlyWatch(cancelled);
  EXPECT_FALSE(w->stop());
  cancelled = true;
  EXPECT_TRUE(w->stop());
  EXPECT_EQ(w->fault(), "");
}

// A device this host does not have (no RDMA here): logged, and the watch
// still stops within its poll interval once the caller cancels.
TEST(PortEvents, TheWatchFollowsCancellationEvenWithoutTheDevice) {
  PortEvents events;
  std::atomic<bool> cancelled{false};
  auto w = events.Watch("no-such-device", 1, cancelled);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_FALSE(w->stop());
  cancelled = true;
  auto t0 = std::chrono::steady_clock::now();
  while (!w->stop() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(w->stop());
  EXPECT_EQ(w->fault(), "");
  auto second = events.Watch("no-such-device", 1, cancelled);  // the same device thread
  w.reset();
  // Within the thread's ~50 ms poll; 2 s of slack for a loaded host (a fixed
  // 120 ms wait failed under a parallel build).
  t0 = std::chrono::steady_clock::now();
  while (!second->stop() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(second->stop());
}

}  // namespace
}  // namespace gdrbench::agent::verbs
