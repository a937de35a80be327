// The gpu tier for agent/memory, on a machine with an NVIDIA GPU: GPU buffers
// allocate, their dma-buf export works, the CUDA pattern kernels agree with the
// CPU definition byte for byte, their throughput is measured, and registration
// fails cleanly when there is no RDMA device (or succeeds when there is one).
// Every test skips, saying why, on a machine without a GPU.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "agent/cuda/driver.h"
#include "agent/cuda/module.h"
#include "agent/memory/gpu_buffer.h"
#include "agent/memory/gpu_pattern.h"
#include "agent/memory/memory.h"
#include "agent/memory/pattern.h"
#include "agent/memory/probe.h"
#if GDRBENCH_HAVE_CUDA_H
#include "tests/gpu/require_gpu.h"
#endif

namespace gdrbench::agent::memory {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

#if GDRBENCH_HAVE_CUDA_H

std::unique_ptr<GpuBuffer> MakeGpu(const std::string& gpu, size_t bytes) {
  auto buf = GpuBuffer::Create(gpu, bytes);
  EXPECT_TRUE(buf.ok()) << buf.status();
  return buf.ok() ? std::move(*buf) : nullptr;
}

TEST(GpuMemory, AllocatesOnGpuZeroByIndexAndByBdf) {
  REQUIRE_GPU();
  auto spec = MemorySpec::Parse("gpu:0");
  ASSERT_TRUE(spec.ok());
  auto buf = Allocate(*spec, 3 << 20, 0);
  ASSERT_TRUE(buf.ok()) << buf.status();
  EXPECT_EQ((*buf)->kind(), Kind::kGpu);
  EXPECT_EQ((*buf)->kind_name(), "gpu");
  EXPECT_EQ((*buf)->check_method(), "cuda-kernel");
  auto& gpu = static_cast<GpuBuffer&>(**buf);
  EXPECT_EQ(gpu.allocated_bytes(), 4u << 20);
  EXPECT_EQ(gpu.device_ptr() % 4096, 0u) << "dma-buf export needs page alignment";
  std::printf("gpu:0 is %s\n", gpu.Describe().c_str());

  const std::string bdf = gpu.context().pci_bdf();
  auto by_bdf = MemorySpec::Parse("gpu:" + bdf);
  ASSERT_TRUE(by_bdf.ok()) << by_bdf.status();
  auto buf2 = Allocate(*by_bdf, 4096, -1);
  ASSERT_TRUE(buf2.ok()) << buf2.status();
  EXPECT_EQ(static_cast<GpuBuffer&>(**buf2).context().ordinal(), 0);
}

TEST(GpuMemory, UnknownGpuIsNotFoundWithTheList) {
  REQUIRE_GPU();
  auto buf = GpuBuffer::Create("99", 4096);
  ASSERT_FALSE(buf.ok());
  EXPECT_EQ(buf.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(buf.status().message(), HasSubstr("no GPU \"99\""));
  EXPECT_THAT(buf.status().message(), HasSubstr("0="));
  auto by_bdf = GpuBuffer::Create("0000:ff:1f.7", 4096);
  EXPECT_EQ(by_bdf.status().code(), absl::StatusCode::kNotFound);
}

TEST(GpuMemory, DmaBufExportCoversTheAllocation) {
  REQUIRE_GPU();
  auto buf = MakeGpu("0", 5 << 20);
  ASSERT_NE(buf, nullptr);
  std::printf("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=%d\n", buf->DmaBufSupported() ? 1 : 0);
  ASSERT_TRUE(buf->DmaBufSupported())
      << "the driver reports no dma-buf support on " << buf->Describe();
  auto fd = buf->ExportDmaBuf();
  ASSERT_TRUE(fd.ok()) << fd.status();
  ASSERT_GE(fd->get(), 0);
  // A dma-buf's size is its file size.
  off_t size = lseek(fd->get(), 0, SEEK_END);
  EXPECT_EQ(size, static_cast<off_t>(buf->allocated_bytes()));
  char link[256] = {};
  std::string path = "/proc/self/fd/" + std::to_string(fd->get());
  ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
  ASSERT_GT(n, 0);
  std::printf("dma-buf fd %d -> %s, %lld bytes\n", fd->get(), link, static_cast<long long>(size));
  EXPECT_THAT(std::string(link), HasSubstr("dmabuf"));
}

TEST(GpuPattern, KernelFillMatchesCpuDefinition) {
  REQUIRE_GPU();
  const size_t n = (8 << 20) + 123;
  auto buf = MakeGpu("0", n);
  ASSERT_NE(buf, nullptr);
  std::vector<uint8_t> host(n, 0xA5);
  ASSERT_TRUE(buf->CopyFromHost(host.data(), 0, n).ok());
  // Unaligned start and end: the head and tail paths of the kernel.
  const size_t off = 13, len = n - 13 - 29;
  ASSERT_TRUE(buf->FillPattern(off, len, 0xfeedULL).ok());
  ASSERT_TRUE(buf->CopyToHost(host.data(), 0, n).ok());
  EXPECT_EQ(CpuCheckPattern(host.data(), off, len, 0xfeedULL), -1);
  for (size_t i : {size_t{0}, size_t{12}, n - 29, n - 1}) {
    EXPECT_EQ(host[i], 0xA5) << "the kernel wrote outside its range at " << i;
  }
  // Tiny ranges, all inside one 16-byte pair.
  for (size_t o : {size_t{0}, size_t{1}, size_t{7}, size_t{15}}) {
    ASSERT_TRUE(buf->FillPattern(o, 3, 77).ok());
    std::vector<uint8_t> small(3);
    ASSERT_TRUE(buf->CopyToHost(small.data(), o, 3).ok());
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(small[i], PatternByte(77, o + i)) << o + i;
  }
}

TEST(GpuPattern, KernelCheckFindsTheFirstBadByteTheCpuWrote) {
  REQUIRE_GPU();
  const size_t n = 16 << 20;
  auto buf = MakeGpu("0", n);
  ASSERT_NE(buf, nullptr);
  std::vector<uint8_t> host(n);
  CpuFillPattern(host.data(), 0, n, 4242);
  ASSERT_TRUE(buf->CopyFromHost(host.data(), 0, n).ok());
  auto clean = buf->CheckPattern(0, n, 4242);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_EQ(*clean, -1);
  auto wrong_seed = buf->CheckPattern(0, n, 4243);
  ASSERT_TRUE(wrong_seed.ok());
  EXPECT_EQ(*wrong_seed, 0);
  for (size_t bad : {size_t{0}, size_t{5}, size_t{8}, size_t{15}, size_t{16}, size_t{999999},
                     n - 17, n - 1}) {
    uint8_t flipped = host[bad] ^ 0x40;
    ASSERT_TRUE(buf->CopyFromHost(&flipped, bad, 1).ok());
    uint8_t later = host[n - 1] ^ 1;  // a later error must not win
    if (bad != n - 1) {
      ASSERT_TRUE(buf->CopyFromHost(&later, n - 1, 1).ok());
    }
    auto got = buf->CheckPattern(0, n, 4242);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, static_cast<int64_t>(bad));
    // A range that starts after the damage does not see it.
    if (bad + 1 < n - 1) {
      auto after = buf->CheckPattern(bad + 1, n - 2 - bad, 4242);
      ASSERT_TRUE(after.ok());
      EXPECT_EQ(*after, -1) << bad;
    }
    ASSERT_TRUE(buf->CopyFromHost(host.data() + bad, bad, 1).ok());
    ASSERT_TRUE(buf->CopyFromHost(host.data() + n - 1, n - 1, 1).ok());
  }
}

TEST(GpuPattern, KernelThroughput) {
  REQUIRE_GPU();
  const size_t n = size_t{1} << 30;
  auto buf = MakeGpu("0", n);
  ASSERT_NE(buf, nullptr);
  ASSERT_TRUE(buf->FillPattern(0, n, 1).ok());  // warm-up: JIT, clocks
  ASSERT_EQ(*buf->CheckPattern(0, n, 1), -1);
  constexpr int kReps = 20;
  auto time = [&](auto&& op) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kReps; ++i) op();
    std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    return double(n) * kReps / dt.count() / 1e9;
  };
  double fill_gbps = time([&] { ASSERT_TRUE(buf->FillPattern(0, n, 2).ok()); });
  double check_gbps = time([&] { ASSERT_EQ(*buf->CheckPattern(0, n, 2), -1); });
  std::printf("pattern kernels on %s, 1 GiB x %d: fill %.0f GB/s, check %.0f GB/s\n",
              buf->Describe().c_str(), kReps, fill_gbps, check_gbps);
  RecordProperty("fill_gbps", std::to_string(fill_gbps));
  RecordProperty("check_gbps", std::to_string(check_gbps));
  // Far below any data-centre GPU's memory bandwidth: catches a kernel that
  // degenerated (serial loop, one block) without flaking on a busy GPU.
  EXPECT_GT(check_gbps, 100.0);
  EXPECT_GT(fill_gbps, 100.0);
}

TEST(GpuPattern, EmptyPtxSaysWhyInsteadOfChecking) {
  // What a build without nvcc embeds: an empty PTX and the reason.
  REQUIRE_GPU();
  auto driver = cuda::CudaDriver::Shared();
  ASSERT_TRUE(driver.ok());
  auto ctx = cuda::GpuContext::Retain(**driver, 0);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  auto module = cuda::Module::Load(*ctx, "", "built without nvcc: no kernels");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(module.status().message(), "built without nvcc: no kernels");
  // And this build's embedded PTX is the real thing.
  EXPECT_NE(kPatternKernelsPtx[0], '\0') << kPatternKernelsMissing;
}

TEST(GpuStaged, PatternTravelsGpuHostGpu) {
  REQUIRE_GPU();
  auto spec = MemorySpec::Parse("gpu-staged:0");
  ASSERT_TRUE(spec.ok());
  const size_t n = (1 << 20) + 7;
  auto any = Allocate(*spec, n, 0);
  ASSERT_TRUE(any.ok()) << any.status();
  auto& staged = static_cast<GpuStagedBuffer&>(**any);
  EXPECT_EQ(staged.kind_name(), "gpu-staged");
  EXPECT_EQ(staged.size(), n);
  ASSERT_TRUE(staged.FillPattern(0, n, 31).ok());
  // The NIC-visible host buffer holds what the GPU kernel wrote.
  const auto* host = static_cast<const uint8_t*>(staged.data());
  EXPECT_EQ(CpuCheckPattern(host, 0, n, 31), -1);
  // Damage "on the wire" (in the bounce buffer) is found on the GPU.
  static_cast<uint8_t*>(staged.data())[54321] ^= 0xFF;
  auto got = staged.CheckPattern(0, n, 31);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 54321);
}

TEST(GpuRegistration, FailsCleanlyWithoutRdmaDeviceOrNamesTheMethod) {
  REQUIRE_GPU();
  auto buf = MakeGpu("0", 1 << 20);
  ASSERT_NE(buf, nullptr);
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list != nullptr) ibv_free_device_list(list);
  auto method = ProbeRegistration(*buf, "");
  std::printf("registration probe: %s\n",
              method.ok() ? method->c_str() : method.status().ToString().c_str());
  if (count == 0) {
    ASSERT_FALSE(method.ok());
    EXPECT_EQ(method.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(method.status().message(), HasSubstr("no RDMA device"));
  } else if (method.ok()) {
    EXPECT_THAT(*method, AnyOf("ibv_reg_dmabuf_mr", "ibv_reg_mr+peermem"));
  } else {
    // A NIC that cannot take GPU memory: the reason names both attempts.
    EXPECT_THAT(method.status().message(), HasSubstr("tried dma-buf"));
    EXPECT_THAT(method.status().message(), HasSubstr("tried peermem"));
  }
}

#else

TEST(GpuMemory, BuiltWithoutCudaHeaders) {
  GTEST_SKIP() << "gdrbench was built without cuda.h: GPU memory is compiled out";
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace
}  // namespace gdrbench::agent::memory
