// Nodes left out grouped by their one cause (controller/analysis/left_out.h).
// The reasons are the ones a real `gdrbench sweep` recorded in run.json on
// 2026-12-05 (this build, no agent running): two .invalid names (RFC 6761:
// never resolve) and a loopback port nothing listens on.
#include "controller/analysis/left_out.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::analysis {
namespace {

using ::testing::HasSubstr;

v1::Run RealRun() {
  v1::Run run;
  run.add_excluded_nodes(
      "gpu01: agent unreachable: agent gpu01.invalid:7070 unreachable: gpu01.invalid does not resolve: Name or "
      "service not known");
  run.add_excluded_nodes(
      "gpu02: agent unreachable: agent gpu02.invalid:7070 unreachable: gpu02.invalid does not resolve: Name or "
      "service not known");
  run.add_excluded_nodes(
      "gpu03: agent unreachable: agent 127.0.0.1:1 unreachable: nothing accepts TCP connections on 127.0.0.1:1: "
      "Connection refused");
  auto* m = run.add_matrices();
  for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) m->add_nodes(n);
  return run;
}

TEST(LeftOut, EachCauseOnceWithItsCountNodesAndRemedy) {
  const auto groups = GroupLeftOut(RealRun());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].cause, "unreachable: the name does not resolve (DNS)");
  EXPECT_THAT(groups[0].nodes, ::testing::ElementsAre("gpu01", "gpu02"));
  EXPECT_THAT(groups[1].cause, HasSubstr("connection refused"));
  const std::string text = FormatLeftOut(RealRun());
  EXPECT_THAT(text, HasSubstr("2 of 4 nodes unreachable: the name does not resolve (DNS): gpu01, gpu02; first: gpu01: "
                              "agent unreachable"));
  EXPECT_THAT(text, HasSubstr("remedy: check the inventory's addresses"));
  EXPECT_THAT(text, HasSubstr("1 of 4 nodes unreachable: nothing listens at the address (connection refused): gpu03; "
                              "gpu03: agent unreachable"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
}

TEST(LeftOut, ManyNodesAreNamedUpToTheLimitThenCounted) {
  v1::Run run;
  for (int i = 1; i <= 16; ++i) {
    run.add_excluded_nodes("gpu" + std::to_string(i) + ": agent unreachable: agent gpu" + std::to_string(i) +
                           ":7070 unreachable: gpu" + std::to_string(i) + " does not resolve: Name or service not known");
  }
  const std::string text = FormatLeftOut(run, 3);
  EXPECT_THAT(text, HasSubstr("16 of 16 nodes unreachable: the name does not resolve (DNS): gpu1, gpu2, gpu3, ... (16); "
                              "first: gpu1: "));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << "one cause, said once";
}

TEST(LeftOut, AnUnknownReasonIsLeftOutWithItsOwnWordsAndNoneIsEmpty) {
  v1::Run run;
  run.add_excluded_nodes("n1: the operator said so");
  run.add_excluded_nodes("no colon at all");
  const auto groups = GroupLeftOut(run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].cause, "left out");
  EXPECT_THAT(groups[0].nodes, ::testing::ElementsAre("n1", "no colon at all"));
  EXPECT_EQ(FormatLeftOut(v1::Run()), "");
}

}  // namespace
}  // namespace gdrbench::controller::analysis
