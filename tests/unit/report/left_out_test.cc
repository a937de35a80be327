// Nodes left out grouped by their one cause (report/left_out.h).
// The reasons are the ones a real `gdrbench sweep` recorded in run.json on
// 2026-12-05 (this build, no agent running): two .invalid names (RFC 6761:
// never resolve) and a loopback port nothing listens on.
#include "report/left_out.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::report {
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

// Captured with this build on 2026-12-05: gpu05 and gpu06 are listeners that
// accept TCP and never answer (python3 socket.listen without accept), reached
// with mTLS and with --insecure; gpu07 a real gdrbench-agent whose
// certificate another CA signed (tests/integration/fleet/fleet_lib.sh's
// fleet_make_pki twice). Under load the fleet bench lost agents the first two
// ways, and the report called them "TLS failed" with the --tls-ca remedy
// (bench/results/2026-12-05-fleet-scale.txt): a timeout is not a certificate.
TEST(LeftOut, AHandshakeThatTimedOutIsNoAnswerInTimeAndARefusedCertificateIsTls) {
  v1::Run run;
  run.add_excluded_nodes(
      "gpu05: agent unreachable: agent 127.0.0.1:47998 unreachable: 127.0.0.1:47998 accepted a TCP "
      "connection but "
      "answered no TLS handshake: timed out after 2000 ms (the agent is hung, or it or this host is "
      "overloaded)");
  run.add_excluded_nodes(
      "gpu06: agent unreachable: agent 127.0.0.1:47997 unreachable: gRPC made no connection within 3000 ms, "
      "though "
      "this controller's own connection to it succeeded right after: timed out, the agent or this host is "
      "overloaded (lower --parallel, or check the agent's load)");
  run.add_excluded_nodes(
      "gpu07: agent unreachable: agent 127.0.0.1:47996 unreachable: TLS with 127.0.0.1:47996: the server's "
      "certificate (CN=server) is issued by CN=gdrbench fleet test ca, a CA that --tls-ca "
      "/tmp/lo-pki2/ca.pem does "
      "not hold (a foreign CA)");
  const auto groups = GroupLeftOut(run);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].cause, "unreachable: no answer in time");
  EXPECT_THAT(groups[0].nodes, ::testing::ElementsAre("gpu05", "gpu06"));
  EXPECT_THAT(groups[0].remedy, ::testing::Not(HasSubstr("--tls-ca")));
  EXPECT_EQ(groups[1].cause, "unreachable: TLS failed");
  EXPECT_THAT(groups[1].nodes, ::testing::ElementsAre("gpu07"));
  EXPECT_THAT(groups[1].remedy, HasSubstr("--tls-ca"));
}

}  // namespace
}  // namespace gdrbench::report
