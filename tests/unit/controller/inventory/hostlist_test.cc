#include "controller/inventory/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Hostlist, ExpandsZeroPaddedRange) {
  auto h = ExpandHostlist("node[08-11]");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(*h, ElementsAre("node08", "node09", "node10", "node11"));
}

TEST(Hostlist, ListsSinglesAndPlainHosts) {
  auto h = ExpandHostlist("gpu[1-2,7],login1");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(*h, ElementsAre("gpu1", "gpu2", "gpu7", "login1"));
}

TEST(Hostlist, SeveralGroupsAreACartesianProduct) {
  auto h = ExpandHostlist("r[1-2]-n[01-02]");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(*h, ElementsAre("r1-n01", "r1-n02", "r2-n01", "r2-n02"));
}

TEST(Hostlist, RejectsMalformedExpressions) {
  for (const char* bad : {"", "node[1-", "node1-2]", "node[a-b]", "node[3-1]", "node[]", "a,,b",
                          "n[1-[2]]"}) {
    auto h = ExpandHostlist(bad);
    EXPECT_FALSE(h.ok()) << bad;
    if (!h.ok()) {
      EXPECT_THAT(std::string(h.status().message()), HasSubstr("hostlist"));
    }
  }
}

TEST(Hostlist, CapsTheHostCount) {
  auto h = ExpandHostlist("n[1-100]", 10);
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("more than 10"));
}

}  // namespace
}  // namespace gdrbench::controller::inventory
