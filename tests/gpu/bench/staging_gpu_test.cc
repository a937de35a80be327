// The gpu tier for the gpu-staged timing and `--memory host,gpu` (issue 11
// item 3), on a machine with an NVIDIA GPU; every test skips, saying why,
// without one.
//   - StagedCopy: TimeStaging (the function RunSweep calls for a gpu-staged
//     source) around the real GpuStagedBuffer::StageToHost (cuMemcpyDtoH
//     into the NIC-local bounce buffer, page-locked with cuMemHostRegister),
//     per size, with the bytes checked on the host; beside it, in the same
//     run, the same copy into pageable memory (the peer: what staging costs
//     without pinning). Prints GB/s per size.
//   - StagedSweep: RunSweep over the fake NIC (real clock) from an endpoint
//     the agent's own MakeEndpoint built on a real gpu-staged buffer: each
//     size's result carries the timed copy and the copy + wire BW.
//   - MemoryKinds: each kind of `--memory host,gpu:0` as the agent meets it
//     per half (allocate the kind, register it with the NIC): on a machine
//     without an RDMA NIC both halves stop at registration, and the gpu
//     half's reason names its GPU buffer and the missing NIC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/bench/staging.h"
#include "agent/cuda/driver.h"
#include "agent/memory/gpu_buffer.h"
#include "agent/memory/memory.h"
#include "agent/memory/pattern.h"
#include "agent/memory/probe.h"
#if GDRBENCH_HAVE_CUDA_H
#include "tests/gpu/require_gpu.h"
#endif
#include "agent/bench/side.h"
#include "agent/bench/write_sweep.h"
#include "tests/unit/agent/bench/fake_nic.h"

namespace gdrbench::agent::bench {
namespace {

using ::testing::HasSubstr;

#if GDRBENCH_HAVE_CUDA_H

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST(StagedCopy, GpuToPinnedHostIsTimedPerSizeBesidePageableMemory) {
  REQUIRE_GPU();
  constexpr size_t kBytes = size_t{64} << 20;
  auto any = memory::Allocate(memory::MemorySpec{memory::Kind::kGpuStaged, "0"}, kBytes, -1);
  ASSERT_TRUE(any.ok()) << any.status();
  auto& staged = static_cast<memory::GpuStagedBuffer&>(**any);
  ASSERT_TRUE(staged.gpu().FillPattern(0, kBytes, 77).ok());
  std::vector<uint8_t> pageable(kBytes);
  StageFn to_pinned = [&](uint64_t off, uint64_t len, std::string* err) {
    absl::Status st = staged.StageToHost(off, len);
    if (!st.ok()) *err = std::string(st.message());
    return st.ok();
  };
  StageFn to_pageable = [&](uint64_t off, uint64_t len, std::string* err) {
    absl::Status st = staged.gpu().CopyToHost(pageable.data() + off, off, len);
    if (!st.ok()) *err = std::string(st.message());
    return st.ok();
  };
  std::printf("staged copy GPU -> host (%s), TimeStaging as RunSweep calls it, 1000 messages "
              "per size over a 0 ns wire:\n",
              staged.gpu().Describe().c_str());
  std::printf("  %10s %7s %16s %18s %8s\n", "bytes", "copies", "pinned[GB/s]", "pageable[GB/s]",
              "ratio");
  for (uint64_t size : {uint64_t{4096}, uint64_t{65536}, uint64_t{1} << 20, uint64_t{8} << 20,
                        uint64_t{64} << 20}) {
    (void)TimeStaging(to_pinned, SteadyNs, 1, kBytes, size, 1000, 0);  // warm
    StagingTiming pinned = TimeStaging(to_pinned, SteadyNs, 1, kBytes, size, 1000, 0);
    StagingTiming paged = TimeStaging(to_pageable, SteadyNs, 1, kBytes, size, 1000, 0);
    ASSERT_TRUE(pinned.ok) << pinned.error;
    ASSERT_TRUE(paged.ok) << paged.error;
    std::printf("  %10lu %7lu %16.2f %18.2f %8.2f\n", static_cast<unsigned long>(size),
                static_cast<unsigned long>(pinned.copies), pinned.copy_gbytes_per_s,
                paged.copy_gbytes_per_s, pinned.copy_gbytes_per_s / paged.copy_gbytes_per_s);
    // Over a 0 ns wire the staged BW is the copy rate itself (x 8 bits), up to
    // the staged time rounded to whole nanoseconds.
    EXPECT_NEAR(pinned.staged_bw_avg_gbps, pinned.copy_gbytes_per_s * 8,
                1e-6 * pinned.staged_bw_avg_gbps);
    // A real copy over PCIe or C2C: above 0.1 GB/s, below 2000 GB/s (a
    // clock or a copy that did nothing would be outside).
    EXPECT_GT(pinned.copy_gbytes_per_s, 0.1) << size;
    EXPECT_LT(pinned.copy_gbytes_per_s, 2000) << size;
    // The bytes the NIC would send are the GPU's.
    const auto* host = static_cast<const uint8_t*>(staged.data());
    EXPECT_EQ(memory::CpuCheckPattern(host, 0, size, 77), -1) << size;
  }
}

// The fake NIC's queues with the real clock, so the staging copies are timed
// in nanoseconds of this machine.
struct RealClockNic {
  testing::FakeNic& nic;
  void Configure(const std::vector<QpTarget>& t, uint32_t bytes, uint32_t post_list) {
    nic.Configure(t, bytes, post_list);
  }
  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    return nic.Post(qp, first, count, signal, wr_id);
  }
  int Poll(int max, ibv_wc* wc) { return nic.Poll(max, wc); }
  int64_t NowNs() { return SteadyNs(); }
  // The control messages RunSweep's bidirectional barriers use (control.h).
  int PostControl(uint32_t qp, uint32_t imm) { return nic.PostControl(qp, imm); }
  int PostControlReceive(uint32_t qp) { return nic.PostControlReceive(qp); }
  int PollControl(int max, ibv_wc* wc) { return nic.PollControl(max, wc); }
  int PostKeepalive(uint32_t qp) { return nic.PostKeepalive(qp); }
  uint32_t qps() const { return nic.qps(); }
  void Idle() { nic.Idle(); }
};

TEST(StagedSweep, RunSweepTimesTheCopyOfAGpuStagedEndpointPerSize) {
  REQUIRE_GPU();
  constexpr uint32_t kQps = 2;
  constexpr uint64_t kSlice = uint64_t{8} << 20;
  auto src = memory::Allocate(memory::MemorySpec{memory::Kind::kGpuStaged, "0"}, kSlice * kQps, -1);
  ASSERT_TRUE(src.ok()) << src.status();
  auto dst = memory::Allocate(memory::MemorySpec{}, kSlice * kQps, -1);
  ASSERT_TRUE(dst.ok()) << dst.status();
  testing::FakeNic fake(kQps, 128, 100);
  fake.AddLocalRegion((*src)->data(), kSlice * kQps, 1);
  fake.AddRemoteRegion((*dst)->data(), kSlice * kQps, 2);
  fake.copy_data = true;
  std::vector<RemoteSlice> remote;
  for (uint32_t q = 0; q < kQps; ++q) {
    remote.push_back(RemoteSlice{reinterpret_cast<uint64_t>((*dst)->data()) + q * kSlice, 2, kSlice});
  }
  SweepEndpoint ep = MakeEndpoint(LocalSlices{src->get(), kSlice, 1}, {nullptr, nullptr}, remote, {}, 5);
  ASSERT_TRUE(static_cast<bool>(ep.stage)) << "MakeEndpoint gave a gpu-staged buffer no stage";
  SweepOptions o;
  o.sizes_bytes = {65536, 1 << 20, 8 << 20};
  o.iterations = 200;
  o.qps = kQps;
  ASSERT_TRUE(Validate(o).ok()) << Validate(o);
  RealClockNic ops{fake};
  std::atomic<bool> cancelled{false};
  std::vector<SizeOutcome> out;
  RunSweep(ops, o, ep, SweepIdentity{"fake0", 1, ""}, cancelled,
           [&](const SizeOutcome& s) { out.push_back(s); });
  ASSERT_EQ(out.size(), 3u);
  std::printf("staged sweep (RunSweep, fake NIC wire, real GPU copies, %u QPs x 200):\n", kQps);
  for (const SizeOutcome& s : out) {
    ASSERT_TRUE(s.ok) << s.error;
    EXPECT_TRUE(s.staged);
    EXPECT_EQ(s.staged_copies, StagingCopies(s.iterations, s.size_bytes));
    EXPECT_LE(s.staged_bw_avg_gbps, s.bw_avg_gbps);
    EXPECT_GT(s.staged_copy_gbytes_per_s, 0.1);
    std::printf("  %8lu B: copy GPU -> pinned host %.2f GB/s over %lu copies; fake wire %.1f Gb/s, "
                "copy + wire %.1f Gb/s\n",
                static_cast<unsigned long>(s.size_bytes), s.staged_copy_gbytes_per_s,
                static_cast<unsigned long>(s.staged_copies), s.bw_avg_gbps, s.staged_bw_avg_gbps);
  }
}

TEST(MemoryKinds, HostThenGpuAsTheAgentMeetsEachHalfOnThisMachine) {
  REQUIRE_GPU();
  int nics = 0;
  ibv_device** list = ibv_get_device_list(&nics);
  if (list != nullptr) ibv_free_device_list(list);
  for (const char* kind : {"host", "gpu:0"}) {
    auto spec = memory::MemorySpec::Parse(kind);
    ASSERT_TRUE(spec.ok());
    auto buf = memory::Allocate(*spec, 1 << 20, -1);
    ASSERT_TRUE(buf.ok()) << kind << ": " << buf.status();
    auto method = memory::ProbeRegistration(**buf, "");
    std::printf("--memory host,gpu:0, %s half: allocated %s memory%s; registration: %s\n", kind,
                (*buf)->kind_name().c_str(),
                spec->kind == memory::Kind::kGpu
                    ? (" on " + static_cast<memory::GpuBuffer&>(**buf).Describe()).c_str()
                    : "",
                method.ok() ? method->c_str() : method.status().ToString().c_str());
    if (nics == 0) {
      ASSERT_FALSE(method.ok()) << kind;
      EXPECT_EQ(method.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(method.status().message(), HasSubstr("no RDMA device"));
      EXPECT_THAT(method.status().message(),
                  HasSubstr(absl::StrCat("cannot register the ", (*buf)->kind_name(), " buffer")));
    }
  }
}

#else

TEST(StagedCopy, BuiltWithoutCudaHeaders) {
  GTEST_SKIP() << "gdrbench was built without cuda.h: GPU memory is compiled out";
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace
}  // namespace gdrbench::agent::bench
