// The controller's flags as a careless operator gives them (issue 12, item
// 13): refused in one line with exit code 2 before any agent is contacted
// (127.0.0.1:1 has nothing listening: contacting it would say unreachable).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/process_util.h"

namespace gdrbench::testing {
namespace {

using ::testing::HasSubstr;

CommandResult Sweep(std::vector<std::string> extra) {
  std::vector<std::string> argv = {BinDir() + "/gdrbench", "sweep", "--agents", "127.0.0.1:1,127.0.0.1:2",
                                   "--insecure", "--no-preflight"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunCommand(argv, std::chrono::seconds(20));
}

TEST(ControllerFlags, NegativeAndOutOfRangeSweepFlagsExit2BeforeContactingAgents) {
  for (auto [flags, words] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--iterations", "-5"}, "--iterations"},
           {{"--iterations", "99999999999"}, "at most 100000000"},
           {{"--tx-depth", "99999"}, "at most 8192"},
           {{"--post-list", "0"}, "give 1 .. 64"},
           {{"--iterations", "5", "--duration", "1"}, "exclude each other"}}) {
    CommandResult r = Sweep(flags);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << " " << flags[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(words)) << flags[0];
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("unreachable"))) << flags[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Item 14: `--agents ''` blamed --hostlist.
TEST(ControllerFlags, AnEmptyAgentsListBlamesAgents) {
  CommandResult r = RunCommand({BinDir() + "/gdrbench", "sweep", "--agents", "", "--insecure"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--agents"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("--hostlist")));
}

// Item 9: 20,000 nodes all-pairs are 400 million tests: refused in one
// sentence (the plan is never built), exit 2, no agent contacted.
TEST(ControllerFlags, APlanPastTheTestCapIsOneSentenceAndExit2) {
  CommandResult r = RunCommand({BinDir() + "/gdrbench", "sweep", "--hostlist", "n[1-20000]", "--port", "1",
                                "--insecure", "--dry-run"},
                               std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the plan has 399980000 tests"));
  EXPECT_THAT(r.err, HasSubstr("more than the 16777216 one run holds"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LT(r.elapsed, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gdrbench::testing
