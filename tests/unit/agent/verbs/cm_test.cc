// rdma_cm address resolution's retry schedule (cm.h): short, doubling
// attempts within the caller's budget.
#include "agent/verbs/cm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

namespace gdrbench::agent::verbs {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

int Sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(ResolveAttemptTimeouts, StartsShortAndDoublesWithinTheBudget) {
  // 10 s, the sessions' per-step default: 50 + 100 + ... + 3200 = 6350, then 3650 left.
  EXPECT_THAT(ResolveAttemptTimeouts(10000),
              ElementsAre(50, 100, 200, 400, 800, 1600, 3200, 3650));
}

TEST(ResolveAttemptTimeouts, SpendsExactlyTheBudget) {
  for (int total : {50, 51, 99, 149, 150, 151, 1000, 2000, 4999, 10000, 60000, 1 << 30}) {
    std::vector<int> s = ResolveAttemptTimeouts(total);
    EXPECT_EQ(Sum(s), total) << total;
    for (int t : s) EXPECT_GE(t, 50) << total;
  }
}

TEST(ResolveAttemptTimeouts, AShortRemainderJoinsTheAttemptBefore) {
  // 50 + 100 leaves 20: not an attempt of its own.
  EXPECT_THAT(ResolveAttemptTimeouts(170), ElementsAre(50, 120));
  EXPECT_THAT(ResolveAttemptTimeouts(350), ElementsAre(50, 100, 200));
}

TEST(ResolveAttemptTimeouts, TinyAndEmptyBudgets) {
  EXPECT_THAT(ResolveAttemptTimeouts(20), ElementsAre(20));
  EXPECT_THAT(ResolveAttemptTimeouts(0), IsEmpty());
  EXPECT_THAT(ResolveAttemptTimeouts(-5), IsEmpty());
}

}  // namespace
}  // namespace gdrbench::agent::verbs
