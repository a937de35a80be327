// When the verify flushes GPUDirect RDMA writes before its check kernel
// (agent/memory/rdma_flush.h). Attribute values from cuda.h (CUDA 12):
// CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE 0, _OWNER 100, _ALL_DEVICES 200;
// CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST 1 << 0, _MEMOPS 1 << 1.
#include "agent/memory/rdma_flush.h"

#include <gtest/gtest.h>

namespace gdrbench::agent::memory {
namespace {

TEST(RdmaFlush, OnlyAGpuThatOrdersForNobodyNeedsTheFlush) {
  EXPECT_EQ(DecideRdmaFlush(100, 0, false), RdmaFlush::kNotNeeded);
  EXPECT_EQ(DecideRdmaFlush(200, 3, true), RdmaFlush::kNotNeeded);
  EXPECT_EQ(DecideRdmaFlush(0, 1, true), RdmaFlush::kFlush);
  EXPECT_EQ(DecideRdmaFlush(0, 3, true), RdmaFlush::kFlush);
}

TEST(RdmaFlush, NoOrderingAndNoHostFlushIsNeverAPass) {
  EXPECT_EQ(DecideRdmaFlush(0, 0, true), RdmaFlush::kUnavailable);
  EXPECT_EQ(DecideRdmaFlush(0, 2, true), RdmaFlush::kUnavailable);  // memops only
  EXPECT_EQ(DecideRdmaFlush(0, 1, false), RdmaFlush::kUnavailable);  // driver lacks the call
}

}  // namespace
}  // namespace gdrbench::agent::memory
