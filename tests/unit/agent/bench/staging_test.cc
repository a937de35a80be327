// The gpu-staged path's timing (staging.h) on the fake NIC's clock: the copy
// a gpu-staged test makes before sending is timed after each size's wire
// pass and charged to every message, so the staged BW is below the wire BW
// by exactly the copy time, and a failed copy fails the size.
#include "agent/bench/staging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "tests/unit/agent/bench/fake_nic.h"

namespace gdrbench::agent::bench {
namespace {

using ::testing::HasSubstr;
using testing::FakeNic;

TEST(StagingCopies, BoundedByMessagesByCountAndByBytes) {
  EXPECT_EQ(StagingCopies(6, 4096), 6u);
  EXPECT_EQ(StagingCopies(50000, 2), kMaxStagingCopies);
  EXPECT_EQ(StagingCopies(5000, 8u << 20), 32u);  // 256 MiB / 8 MiB
  EXPECT_EQ(StagingCopies(0, 1u << 30), 1u);      // always one
}

// 10 copies of 1 MB at 10 us each on a clock the copies advance: 100 GB/s,
// and 10 messages over a 100 us wire pass become 200 us staged.
TEST(TimeStaging, CopyRateAndStagedBandwidthFollowTheModel) {
  int64_t now = 0;
  std::vector<uint64_t> offsets;
  StageFn stage = [&](uint64_t off, uint64_t len, std::string*) {
    offsets.push_back(off);
    now += static_cast<int64_t>(len / 100);  // 100 B/ns = 100 GB/s
    return true;
  };
  StagingTiming t = TimeStaging(stage, [&] { return now; }, 2, 1 << 21, 1'000'000, 10, 100'000);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.copies, 10u);
  EXPECT_EQ(t.copy_ns, 100'000);
  EXPECT_DOUBLE_EQ(t.copy_gbytes_per_s, 100.0);
  EXPECT_DOUBLE_EQ(t.staged_bw_avg_gbps, GbpsOf(10'000'000, 200'000));  // 400 Gb/s
  // Each copy from the start of a QP's slice, rotating over the QPs.
  ASSERT_EQ(offsets.size(), 10u);
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[1], uint64_t{1} << 21);
  EXPECT_EQ(offsets[2], 0u);
}

TEST(TimeStaging, AFailedCopyIsTheSizesErrorAndAStoppedClockIsNoResult) {
  int64_t now = 0;
  StageFn fails = [](uint64_t, uint64_t, std::string* err) {
    *err = "cuMemcpyDtoH of 4096 bytes from GPU 0: CUDA_ERROR_ILLEGAL_ADDRESS";
    return false;
  };
  StagingTiming t = TimeStaging(fails, [&] { return now; }, 1, 4096, 4096, 3, 1000);
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.error, HasSubstr("staging copy (GPU -> pinned host) at 4096 B: cuMemcpyDtoH"));
  StageFn instant = [](uint64_t, uint64_t, std::string*) { return true; };
  t = TimeStaging(instant, [&] { return now; }, 1, 4096, 4096, 3, 1000);
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.error, HasSubstr("clock did not advance"));
}

// Through RunSweep on the fake NIC: a staged endpoint gets the copy timed
// per size (the wire numbers unchanged); an endpoint without `stage` (host,
// gpu) gets none; a copy that fails ends the sweep at that size.
TEST(RunSweep, TimesTheStagingCopyOfAGpuStagedSourceAfterEachWirePass) {
  memory::MemorySpec host;
  auto src = memory::Allocate(host, 2 * 65536, -1);
  auto dst = memory::Allocate(host, 2 * 65536, -1);
  ASSERT_TRUE(src.ok() && dst.ok());
  SweepOptions o;
  o.sizes_bytes = {4096, 65536};
  o.iterations = 4;
  o.qps = 2;
  o.tx_depth = 2;
  o.cq_moderation = 1;
  ASSERT_TRUE(Validate(o).ok());
  auto make_ep = [&] {
    SweepEndpoint ep;
    ep.slice_bytes = 65536;
    for (uint32_t q = 0; q < 2; ++q) {
      ep.slices.push_back(QpTarget{
          .qp = nullptr,
          .local_addr = reinterpret_cast<uint64_t>((*src)->data()) + q * 65536,
          .lkey = 1,
          .remote_addr = reinterpret_cast<uint64_t>((*dst)->data()) + q * 65536,
          .rkey = 2});
    }
    return ep;
  };
  auto run = [&](FakeNic& nic, const SweepEndpoint& ep) {
    std::vector<SizeOutcome> out;
    std::atomic<bool> cancelled{false};
    RunSweep(nic, o, ep, SweepIdentity{"fake0", 1, ""}, cancelled,
             [&](const SizeOutcome& s) { out.push_back(s); });
    return out;
  };
  auto nic_for = [&] {
    auto nic = std::make_unique<FakeNic>(2, 2, 100);
    nic->AddLocalRegion((*src)->data(), 2 * 65536, 1);
    nic->AddRemoteRegion((*dst)->data(), 2 * 65536, 2);
    return nic;
  };

  auto plain = nic_for();
  auto wire = run(*plain, make_ep());
  ASSERT_EQ(wire.size(), 2u);
  for (const SizeOutcome& s : wire) EXPECT_FALSE(s.staged);

  auto nic = nic_for();
  SweepEndpoint ep = make_ep();
  ep.stage = [&](uint64_t, uint64_t len, std::string*) {
    nic->Advance(static_cast<int64_t>(len));  // 1 B/ns = 1 GB/s
    return true;
  };
  auto staged = run(*nic, ep);
  ASSERT_EQ(staged.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const SizeOutcome& s = staged[i];
    ASSERT_TRUE(s.ok) << s.error;
    EXPECT_TRUE(s.staged);
    EXPECT_EQ(s.staged_copies, 8u);  // 4 iterations x 2 QPs
    EXPECT_EQ(s.bw_avg_gbps, wire[i].bw_avg_gbps) << "the wire pass is the same";
    // The fake clock adds 100 ns per NowNs read: within 1 % of 1 GB/s.
    EXPECT_NEAR(s.staged_copy_gbytes_per_s, 1.0, 0.01);
    EXPECT_LT(s.staged_bw_avg_gbps, s.bw_avg_gbps);
    double copy_ns = static_cast<double>(s.size_bytes) / s.staged_copy_gbytes_per_s * 8;
    EXPECT_NEAR(s.staged_bw_avg_gbps, GbpsOf(8 * s.size_bytes, s.duration_ns + int64_t(copy_ns)),
                1e-6 * s.bw_avg_gbps);
  }

  auto broken = nic_for();
  SweepEndpoint bad = make_ep();
  int calls = 0;
  bad.stage = [&](uint64_t, uint64_t len, std::string* err) {
    broken->Advance(static_cast<int64_t>(len));
    if (++calls > 8) *err = "CUDA_ERROR_LAUNCH_FAILED";
    return calls <= 8;
  };
  auto failed = run(*broken, bad);
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_TRUE(failed[0].ok);
  EXPECT_FALSE(failed[1].ok);
  EXPECT_THAT(failed[1].error,
              HasSubstr("staging copy (GPU -> pinned host) at 65536 B: CUDA_ERROR_LAUNCH_FAILED"));
}

// Only a gpu-staged buffer has anything to stage: host memory says so.
TEST(Buffer, StageToHostOfAHostBufferIsAFailedPrecondition) {
  auto b = memory::Allocate(memory::MemorySpec{}, 4096, -1);
  ASSERT_TRUE(b.ok());
  absl::Status st = (*b)->StageToHost(0, 4096);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("memory host is not staged"));
}

}  // namespace
}  // namespace gdrbench::agent::bench
