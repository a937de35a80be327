// Blame kind "gdr" (issue 11 item 3): with host and gpu memory on the same
// pair, a GPU result far below host, or a failed GPU half, is the GPU path's,
// not the link's; the ratios; a run with a failed half does not pass.
#include "controller/analysis/gdr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::analysis {
namespace {

using ::testing::HasSubstr;

// A result of one kind: `gbps` per size (64 KiB, 1 MiB), OK unless `status`.
v1::PairResult Half(const std::string& memory, std::vector<double> gbps,
                    v1::ResultStatus status = v1::RESULT_STATUS_OK, const std::string& reason = "") {
  v1::PairResult r;
  r.mutable_src()->set_node("n1");
  r.mutable_dst()->set_node("n2");
  r.mutable_src()->set_memory(memory);
  r.mutable_dst()->set_memory(memory);
  r.set_rail(0);
  r.set_status(status);
  r.set_reason(reason);
  const uint64_t sizes[] = {65536, 1 << 20};
  for (size_t i = 0; i < gbps.size(); ++i) {
    v1::SizeResult* s = r.add_sizes();
    s->set_size_bytes(sizes[i]);
    s->set_bw_avg_gbps(gbps[i]);
    s->set_status(v1::RESULT_STATUS_OK);
  }
  return r;
}

v1::PairResult HostThen(const v1::PairResult& later) {
  v1::PairResult r = Half("host", {80, 100});
  *r.add_memory_halves() = later;
  FillMemoryRatios(&r);
  return r;
}

TEST(Gdr, AGpuHalfFarBelowAPassingHostHalfIsBlamedOnTheGpuPath) {
  std::vector<v1::PairResult> pairs = {HostThen(Half("gpu:0", {70, 42}))};
  EXPECT_DOUBLE_EQ(pairs[0].gpu_host_ratio(), 0.42);
  auto blame = GdrBlames(pairs, DefaultPolicy());
  ASSERT_EQ(blame.size(), 1u);
  EXPECT_EQ(blame[0].kind(), "gdr");
  EXPECT_EQ(blame[0].subject(), "n1->n2 rail 0");
  EXPECT_EQ(blame[0].evidence_gbps(), 42);
  EXPECT_THAT(blame[0].reason(), HasSubstr("42% of host memory's 100 Gb/s at 1 MiB"));
  EXPECT_THAT(blame[0].reason(), HasSubstr("not the link"));
}

TEST(Gdr, AGpuHalfAtTheThresholdOrAboveIsNotBlamedAndZeroTurnsTheCheckOff) {
  EXPECT_TRUE(GdrBlames({HostThen(Half("gpu:0", {70, 80}))}, DefaultPolicy()).empty());  // 0.8 exactly
  v1::VerdictPolicy off = DefaultPolicy();
  off.set_min_gpu_host_ratio(0);
  EXPECT_TRUE(GdrBlames({HostThen(Half("gpu:0", {70, 10}))}, off).empty());
  EXPECT_EQ(GdrBlames({HostThen(Half("gpu:0", {70, 79}))}, DefaultPolicy()).size(), 1u);
}

TEST(Gdr, AFailedGpuHalfBesideAPassingHostHalfIsBlamedWithItsReason) {
  std::vector<v1::PairResult> pairs = {HostThen(Half(
      "gpu:0", {}, v1::RESULT_STATUS_ERROR, "OpenTarget on n2: no NVIDIA driver on this node"))};
  EXPECT_EQ(pairs[0].gpu_host_ratio(), 0);
  auto blame = GdrBlames(pairs, DefaultPolicy());
  ASSERT_EQ(blame.size(), 1u);
  EXPECT_THAT(blame[0].reason(),
              HasSubstr("gpu memory ERROR (OpenTarget on n2: no NVIDIA driver on this node) while host "
                        "memory passes on the same pair"));
}

TEST(Gdr, NothingIsBlamedOnTheGpuWhenHostFailsTooOrNoGpuKindRan) {
  v1::PairResult r = Half("host", {}, v1::RESULT_STATUS_FAILED, "completion error");
  *r.add_memory_halves() = Half("gpu:0", {}, v1::RESULT_STATUS_FAILED, "completion error");
  EXPECT_TRUE(GdrBlames({r}, DefaultPolicy()).empty());
  EXPECT_TRUE(GdrBlames({HostThen(Half("hugepage", {80, 50}))}, DefaultPolicy()).empty());
  EXPECT_TRUE(GdrBlames({Half("gpu:0", {1, 1})}, DefaultPolicy()).empty());  // one kind only
}

TEST(Gdr, HugepageStandsForHostAndStagedUsesCopyPlusWire) {
  v1::PairResult r = Half("hugepage", {80, 100});
  v1::PairResult staged = Half("gpu-staged:0", {80, 99});
  staged.mutable_sizes(0)->set_staged_bw_avg_gbps(20);
  staged.mutable_sizes(1)->set_staged_bw_avg_gbps(35);
  *r.add_memory_halves() = Half("gpu:0", {70, 95});
  *r.add_memory_halves() = staged;
  FillMemoryRatios(&r);
  EXPECT_DOUBLE_EQ(r.gpu_host_ratio(), 0.95);
  EXPECT_DOUBLE_EQ(r.staged_host_ratio(), 0.35);
}

TEST(Gdr, TheRatioUsesTheLargestSizeBothMeasuredOk) {
  v1::PairResult gpu = Half("gpu:0", {60, 30}, v1::RESULT_STATUS_FAILED, "1048576 B: completion error");
  gpu.mutable_sizes(1)->set_status(v1::RESULT_STATUS_FAILED);
  v1::PairResult r = Half("host", {80, 100});
  *r.add_memory_halves() = gpu;
  FillMemoryRatios(&r);
  EXPECT_EQ(r.gpu_host_ratio(), 0);  // the gpu half as a whole did not pass
  gpu.set_status(v1::RESULT_STATUS_OK);  // (as a pair tester never leaves it; the sizes decide)
  *r.mutable_memory_halves(0) = gpu;
  FillMemoryRatios(&r);
  EXPECT_DOUBLE_EQ(r.gpu_host_ratio(), 60.0 / 80);  // at 64 KiB, not the failed 1 MiB
}

TEST(Gdr, AFailedHalfOrAGdrBlameFailsTheRunAndTheSummarySaysWhy) {
  Outcome o;
  o.cells = o.pass = 1;
  Summarize({}, &o);
  ASSERT_TRUE(o.passed);
  std::vector<v1::PairResult> pairs = {
      HostThen(Half("gpu:0", {}, v1::RESULT_STATUS_ERROR, "OpenTarget on n2: no GPU"))};
  JudgeMemoryHalves(pairs, DefaultPolicy(), {}, &o);
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.memory_halves_bad, 1u);
  EXPECT_EQ(o.gdr_pairs, 1u);
  EXPECT_THAT(o.summary, HasSubstr("FAIL: 1/1 cells pass; 1 memory half(s) of later --memory kinds failed"));
  EXPECT_THAT(o.summary, HasSubstr("blame: gdr n1->n2 rail 0"));

  Outcome clean;
  clean.cells = clean.pass = 1;
  JudgeMemoryHalves({HostThen(Half("gpu:0", {80, 99}))}, DefaultPolicy(), {}, &clean);
  EXPECT_TRUE(clean.passed) << clean.summary;
}

}  // namespace
}  // namespace gdrbench::controller::analysis
