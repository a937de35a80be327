// A real agent process on loopback, queried through the real CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/process_util.h"

namespace gdrbench::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Cli() { return BinDir() + "/gdrbench"; }

TEST(NodeInfoCli, PrintsTheAgentsNodeReport) {
  AgentProcess agent({"--insecure"});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand({Cli(), "node-info", "--agent", agent.address(), "--insecure"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Node "));
  EXPECT_THAT(r.out, HasSubstr("kernel"));
  EXPECT_THAT(r.out, HasSubstr("RDMA devices"));
  EXPECT_THAT(r.out, HasSubstr("GPUs"));
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(agent.Stop(), 0) << agent.log();
}

TEST(NodeInfoCli, JsonIsTheProtoWithFieldNames) {
  AgentProcess agent({"--insecure"});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r =
      RunCommand({Cli(), "node-info", "--agent", agent.address(), "--insecure", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"hostname\""));
  EXPECT_THAT(r.out, HasSubstr("\"software\""));
  EXPECT_THAT(r.out, HasSubstr("\"collected_at\""));
}

TEST(NodeInfoCli, NothingListeningIsOneLineNamingTheAddressWithin5s) {
  CommandResult r = RunCommand({Cli(), "node-info", "--agent", "127.0.0.1:1", "--insecure"},
                               std::chrono::seconds(20));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.elapsed, std::chrono::seconds(5));
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(NodeInfoCli, MalformedAddressIsRejected) {
  CommandResult r = RunCommand({Cli(), "node-info", "--agent", "nonsense", "--insecure"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'nonsense' is not HOST:PORT"));
}

TEST(NodeInfoCli, UsageErrorsAreOneLineAndExitCode2) {
  for (std::vector<std::string> argv :
       {std::vector<std::string>{Cli()}, {Cli(), "node-info"}, {Cli(), "no-such-command"},
        {Cli(), "node-info", "--agent", "127.0.0.1:1", "--timeout-ms", "-5"}}) {
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << argv.size() << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("gdrbench: "));
  }
}

TEST(Agent, RefusesToStartWithoutTlsOrInsecure) {
  AgentProcess agent({});
  EXPECT_FALSE(agent.Start());
  EXPECT_THAT(agent.log(), HasSubstr("--tls-cert and --tls-key"));
}

TEST(Agent, RefusesAnRdmaDeviceThatDoesNotExist) {
  AgentProcess agent({"--insecure", "--devices", "mlx5_nope"});
  EXPECT_FALSE(agent.Start());
  EXPECT_THAT(agent.log(), HasSubstr("'mlx5_nope' does not exist"));
}

TEST(Agent, ReadsFlagsFromAConfigFile) {
  TempDir dir;
  std::string conf = dir.path() + "/agent.conf";
  ASSERT_EQ(RunCommand({"/bin/sh", "-c", "printf 'insecure = true\\nlog-level = debug\\n' > " + conf})
                .exit_code,
            0);
  AgentProcess agent({"--config", conf});
  ASSERT_TRUE(agent.Start()) << agent.log();
  EXPECT_THAT(agent.log(), HasSubstr("PLAINTEXT"));
}

TEST(Agent, StopsCleanlyOnSigterm) {
  AgentProcess agent({"--insecure"});
  ASSERT_TRUE(agent.Start()) << agent.log();
  // Health is served (grpc.health.v1) and the agent stops cleanly on SIGTERM.
  EXPECT_EQ(agent.Stop(), 0);
  EXPECT_THAT(agent.log(), HasSubstr("shutting down"));
}

}  // namespace
}  // namespace gdrbench::testing
