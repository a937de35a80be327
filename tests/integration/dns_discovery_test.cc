// `--agents dns:NAME:PORT` against a real agent on loopback: the system
// resolver turns localhost into 127.0.0.1 (/etc/hosts), the CLI asks that
// agent for its node info and names the node by the hostname it reports.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/process_util.h"

namespace gdrbench::testing {
namespace {

using ::testing::HasSubstr;

std::string Cli() { return BinDir() + "/gdrbench"; }

std::string Hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST(DnsDiscovery, LocalhostReachesTheAgentAndTakesItsHostname) {
  AgentProcess agent({"--insecure"});
  ASSERT_TRUE(agent.Start()) << agent.log();
  TempDir out;
  std::string spec = "dns:localhost:" + std::to_string(agent.port());
  CommandResult r = RunCommand(
      {Cli(), "sweep", "--agents", spec, "--insecure", "--out", out.path(), "--progress", "none"});
  // One agent is one node: too few for a sweep, and the refusal says which
  // node DNS found, under the name its agent gave.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("a sweep needs at least 2 nodes, got 1 (" + Hostname() + " at " +
                                agent.address() + ")"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(agent.Stop(), 0) << agent.log();
}

TEST(DnsDiscovery, ANameWithoutAddressIsOneLineNamingIt) {
  TempDir out;
  CommandResult r = RunCommand({Cli(), "sweep", "--agents", "dns:no-such-agent.invalid",
                                "--insecure", "--out", out.path()});
  EXPECT_EQ(r.exit_code, 4) << r.err;  // could not run (controller/cli/exit_codes.h)
  EXPECT_THAT(r.err, HasSubstr("--agents: dns:no-such-agent.invalid: 'no-such-agent.invalid'"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace gdrbench::testing
