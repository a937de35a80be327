#include "agent/bench/sweep_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace gdrbench::agent::bench {
namespace {

using ::testing::HasSubstr;

TEST(AllSizes, IsPerftestDashA) {
  auto s = AllSizes();
  ASSERT_EQ(s.size(), 23u);
  EXPECT_EQ(s.front(), 2u);
  EXPECT_EQ(s.back(), 8u << 20);
}

SweepOptions Good() {
  SweepOptions o;
  o.sizes_bytes = {2, 65536};
  return o;
}

TEST(ValidateSweep, DefaultsArePerftests) {
  SweepOptions o = Good();
  EXPECT_TRUE(Validate(o).ok());
  EXPECT_EQ(o.iterations, 5000u);
  EXPECT_EQ(o.tx_depth, 128u);
  EXPECT_EQ(o.cq_moderation, 100u);
  EXPECT_EQ(o.post_list, 1u);
}

TEST(ValidateSweep, RejectsEachBadField) {
  auto expect_bad = [](SweepOptions o, const char* word) {
    absl::Status st = Validate(o);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << word;
    EXPECT_THAT(std::string(st.message()), HasSubstr(word));
  };
  SweepOptions o = Good();
  o.sizes_bytes = {};
  expect_bad(o, "sizes");
  o = Good();
  o.sizes_bytes = {64, 2};
  expect_bad(o, "ascending");
  o = Good();
  o.iterations = 0;
  expect_bad(o, "exactly one");
  o = Good();
  o.duration_ns = 1'000'000'000;
  expect_bad(o, "exactly one");
  o = Good();
  o.qps = 0;
  expect_bad(o, "qps");
  o = Good();
  o.qps = 1000;
  expect_bad(o, "qps");
  o = Good();
  o.tx_depth = 50;
  expect_bad(o, "CQ moderation");
  o = Good();
  o.post_list = 3;
  expect_bad(o, "multiple");
  o = Good();
  o.iterations = kMaxIterations + 1;
  expect_bad(o, "iterations");
  o = Good();
  o.iterations = 0;
  o.duration_ns = kMaxDurationNs + 1;
  expect_bad(o, "duration");
  o = Good();
  o.sizes_bytes = {1ull << 30};
  o.qps = 64;
  expect_bad(o, "buffer");
}

TEST(PlanLayout, VerifyRegionsFollowTheDataAreaWithoutOverlap) {
  BufferLayout l = PlanLayout({2, 100, 4096}, true);
  ASSERT_EQ(l.verify_offsets.size(), 3u);
  EXPECT_EQ(l.verify_offsets[0], 4096u);
  EXPECT_EQ(l.verify_offsets[1], 4096u + 64);
  EXPECT_EQ(l.verify_offsets[2], 4096u + 64 + 128);
  EXPECT_EQ(l.slice_bytes, 4096u + 64 + 128 + 4096);
  BufferLayout n = PlanLayout({2, 100, 4096}, false);
  EXPECT_TRUE(n.verify_offsets.empty());
  EXPECT_EQ(n.slice_bytes, 4096u);
}

TEST(PerftestCommand, NamesEveryParameterThatChangesTheResult) {
  SweepOptions o = Good();
  o.qps = 4;
  EXPECT_EQ(PerftestCommand(o, 65536, "rxe0", 1, "10.0.0.2"),
            "ib_write_bw -d rxe0 -x 1 -s 65536 -n 5000 -q 4 -t 128 -Q 100 -l 1 --report_gbits "
            "10.0.0.2");
  o.iterations = 0;
  o.duration_ns = 3'000'000'000;
  o.bidirectional = true;
  EXPECT_EQ(PerftestCommand(o, 2, "mlx5_0", -1, ""),
            "ib_write_bw -d mlx5_0 -s 2 -D 6 -q 4 -t 128 -Q 100 -l 1 -b --report_gbits");
  // Relaxed ordering is perftest's default: named only when off; the service
  // level and traffic class when set (-T through rdma_cm, --tclass otherwise).
  o.relaxed_ordering = false;
  o.sl = 3;
  o.tclass = 106;
  EXPECT_EQ(PerftestCommand(o, 2, "mlx5_0", -1, ""),
            "ib_write_bw -d mlx5_0 -s 2 -D 6 -q 4 -t 128 -Q 100 -l 1 -b --disable_pcie_relaxed -S 3 "
            "--tclass=106 --report_gbits");
  o.sl = 0;
  EXPECT_EQ(PerftestCommand(o, 2, "rxe0", 1, "10.0.0.2"),
            "ib_write_bw -d rxe0 -x 1 -s 2 -D 6 -q 4 -t 128 -Q 100 -l 1 -b --disable_pcie_relaxed -T 106 "
            "--report_gbits 10.0.0.2");
}

TEST(MrAccess, RelaxedOrderingUnlessDisabled) {
  SweepOptions o = Good();
  EXPECT_EQ(MrAccess(o), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_RELAXED_ORDERING);
  o.relaxed_ordering = false;
  EXPECT_EQ(MrAccess(o), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  o.sl = 16;
  EXPECT_FALSE(Validate(o).ok());
  o.sl = 0;
  o.tclass = 256;
  EXPECT_FALSE(Validate(o).ok());
}

TEST(FormatSize, UsesBinarySuffixes) {
  EXPECT_EQ(FormatSize(2), "2");
  EXPECT_EQ(FormatSize(65536), "64K");
  EXPECT_EQ(FormatSize(8u << 20), "8M");
  EXPECT_EQ(FormatSize(1000), "1000");
}

}  // namespace
}  // namespace gdrbench::agent::bench
