// CaptureStdout: a command that does not end is killed at its limit, and one
// that writes much on stderr does not block the read of its stdout.
#include "controller/cli/slurm_exec.h"

#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

TEST(CaptureStdout, ReturnsStdout) {
  auto out = CaptureStdout({"/bin/sh", "-c", "echo one; echo two"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "one\ntwo\n");
}

TEST(CaptureStdout, AFailureNamesTheExitCodeAndTheFirstErrorLine) {
  auto out =
      CaptureStdout({"/bin/sh", "-c", "echo 'error: the cause' >&2; echo 'fatal: the end' >&2; exit 3"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(out.status().message(), "/bin/sh exited 3: error: the cause");
}

TEST(CaptureStdout, ACommandThatDoesNotEndIsKilledAtItsLimit) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = CaptureStdout({"/bin/sleep", "30"}, std::chrono::milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("/bin/sleep 30: no answer in 0.3 s (killed)"));
  EXPECT_LT(took, std::chrono::seconds(10));  // killed, not waited for
}

TEST(CaptureStdout, MuchOnStderrDoesNotBlockStdout) {
  // 1 MiB on stderr before anything on stdout: more than a pipe holds.
  auto out =
      CaptureStdout({"/bin/sh", "-c", "head -c 1048576 /dev/zero >&2; echo done"}, std::chrono::seconds(60));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "done\n");
}

}  // namespace
}  // namespace gdrbench::controller::cli
