#include "agent/memory/memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::agent::memory {
namespace {

using ::testing::HasSubstr;

TEST(MemorySpec, ParsesEveryKind) {
  auto host = MemorySpec::Parse("host");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->kind, Kind::kHost);
  auto huge = MemorySpec::Parse(" HugePage ");
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_EQ(huge->kind, Kind::kHugepage);
  auto gpu = MemorySpec::Parse("gpu:3");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->kind, Kind::kGpu);
  EXPECT_EQ(gpu->gpu, "3");
  auto staged = MemorySpec::Parse("gpu-staged:0000:17:00.0");
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_EQ(staged->kind, Kind::kGpuStaged);
  EXPECT_EQ(staged->gpu, "0000:17:00.0");
}

TEST(MemorySpec, ShortBdfGetsDomainAndLowerCase) {
  auto spec = MemorySpec::Parse("gpu:AB:00.0");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->gpu, "0000:ab:00.0");
  EXPECT_EQ(spec->ToString(), "gpu:0000:ab:00.0");
}

TEST(MemorySpec, RoundTripsThroughToString) {
  for (const char* text : {"host", "hugepage", "gpu:0", "gpu-staged:1", "gpu:0000:17:00.0"}) {
    auto spec = MemorySpec::Parse(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
    EXPECT_EQ(spec->ToString(), text);
  }
}

TEST(MemorySpec, RejectsBadInputWithTheAcceptedForms) {
  for (const char* text : {"", "gpu", "gpu:", "gpu:x", "gpu:-1", "gpu:0000:17:00.9", "cuda:0",
                           "hosts", "gpu:0:0", "gpu-staged", "gpu:123456"}) {
    auto spec = MemorySpec::Parse(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr("expected host, hugepage, gpu:<index>"))
        << text;
  }
}

}  // namespace
}  // namespace gdrbench::agent::memory
