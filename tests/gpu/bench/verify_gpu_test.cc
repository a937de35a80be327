// The gpu tier of the verify (issue 34 item 2), on a machine with an NVIDIA
// GPU; every test skips, saying why, without one.
//   - ReusedRange: a first test's pattern in a GPU buffer, the buffer freed
//     and the same size allocated again (cuMemAlloc tends to hand the range
//     back, uncleared): what survives is printed; the region poisoned as a
//     target poisons it on open fails the check with the first test's seed
//     (a verify WRITE that never landed), and the re-test's own pattern,
//     under the seed of the new registration, passes.
//   - FlushPath: the GPU's GPUDirect RDMA ordering and flush attributes, the
//     decision the check takes (rdma_flush.h), and FlushRdmaWrites on it.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "agent/bench/initiator.h"
#include "agent/bench/sweep_options.h"
#include "agent/memory/memory.h"
#include "agent/memory/rdma_flush.h"
#if GDRBENCH_HAVE_CUDA_H
#include "agent/memory/gpu_buffer.h"
#include "tests/gpu/require_gpu.h"
#endif

namespace gdrbench::agent::bench {
namespace {

#if GDRBENCH_HAVE_CUDA_H

TEST(VerifyGpu, AReusedRangeFailsWhenTheVerifyWriteNeverLands) {
  REQUIRE_GPU();
  const std::vector<uint64_t> sizes = {4096, 1 << 20};
  BufferLayout l = PlanLayout(sizes, true);
  const uint64_t slice = TargetSliceBytes(l, 0);
  const memory::MemorySpec gpu{memory::Kind::kGpu, "0"};
  // The first test: its verify WRITEs landed (written here as the NIC would).
  auto first = memory::Allocate(gpu, slice, -1);
  ASSERT_TRUE(first.ok()) << first.status();
  const uint64_t addr = reinterpret_cast<uint64_t>((*first)->data());
  const uint64_t seed1 = TestSeed(1, {RemoteSlice{addr, 0x1234, slice}});
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE((*first)->FillPattern(l.verify_offsets[i], sizes[i], SizeSeed(seed1, sizes[i])).ok());
  }
  for (const ReverseCheck& c : CheckRegions(**first, sizes, l.verify_offsets, slice, 1, seed1)) {
    EXPECT_TRUE(c.verified) << c.error;
  }
  first->reset();
  // The re-test on the same size.
  auto again = memory::Allocate(gpu, slice, -1);
  ASSERT_TRUE(again.ok()) << again.status();
  const bool reused = reinterpret_cast<uint64_t>((*again)->data()) == addr;
  auto stale = CheckRegions(**again, sizes, l.verify_offsets, slice, 1, seed1);
  std::printf("verify_gpu: range reused: %s; the first test's pattern survived: %s\n",
              reused ? "yes" : "no", stale.front().verified ? "yes" : "no");
  ASSERT_TRUE(PoisonRegions(**again, sizes, l.verify_offsets, slice, 1, 1).ok());
  for (const ReverseCheck& c : CheckRegions(**again, sizes, l.verify_offsets, slice, 1, seed1)) {
    EXPECT_FALSE(c.verified) << c.size_bytes << ": a poisoned region passed";
  }
  const uint64_t seed2 = TestSeed(1, {RemoteSlice{addr, 0x1235, slice}});
  EXPECT_NE(seed1, seed2);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE((*again)->FillPattern(l.verify_offsets[i], sizes[i], SizeSeed(seed2, sizes[i])).ok());
  }
  for (const ReverseCheck& c : CheckRegions(**again, sizes, l.verify_offsets, slice, 1, seed2)) {
    EXPECT_TRUE(c.verified) << c.error;
  }
}

TEST(VerifyGpu, TheFlushPathFollowsTheGpusAttributes) {
  REQUIRE_GPU();
  auto buf = memory::GpuBuffer::Create("0", 4096);
  ASSERT_TRUE(buf.ok()) << buf.status();
  const cuda::CudaApi& api = (*buf)->context().api();
  CUdevice dev;
  ASSERT_EQ(api.cuDeviceGet(&dev, (*buf)->context().ordinal()), CUDA_SUCCESS);
  int ordering = -1, options = -1;
  ASSERT_EQ(api.cuDeviceGetAttribute(&ordering, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, dev),
            CUDA_SUCCESS);
  ASSERT_EQ(api.cuDeviceGetAttribute(&options, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, dev),
            CUDA_SUCCESS);
  const memory::RdmaFlush d =
      memory::DecideRdmaFlush(ordering, options, api.cuFlushGPUDirectRDMAWrites != nullptr);
  std::printf("verify_gpu: %s: RDMA_WRITES_ORDERING %d, FLUSH_WRITES_OPTIONS %d, "
              "cuFlushGPUDirectRDMAWrites %s: %s\n",
              (*buf)->Describe().c_str(), ordering, options,
              api.cuFlushGPUDirectRDMAWrites != nullptr ? "present" : "absent",
              d == memory::RdmaFlush::kNotNeeded ? "no flush needed"
              : d == memory::RdmaFlush::kFlush   ? "flush before the check"
                                                 : "cannot be flushed");
  absl::Status st = (*buf)->FlushRdmaWrites();
  if (d == memory::RdmaFlush::kUnavailable) {
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  } else {
    EXPECT_TRUE(st.ok()) << st;
  }
  // The call itself, whenever the GPU offers the host flush (exercised even
  // where the ordering makes it unnecessary).
  if ((options & memory::kRdmaFlushOptionHost) != 0 && api.cuFlushGPUDirectRDMAWrites != nullptr) {
    cuda::ScopedCurrent current((*buf)->context());
    ASSERT_TRUE(current.status().ok());
    EXPECT_EQ(api.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                             CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER),
              CUDA_SUCCESS);
  }
}

#else
TEST(VerifyGpu, NeedsCudaH) { GTEST_SKIP() << "built without cuda.h"; }
#endif

}  // namespace
}  // namespace gdrbench::agent::bench
