// Issue 32, Why 5: sweep flags that contradict each other or would be ignored
// are refused with one line naming them (they used to exit 0 and say
// nothing), and "did you mean" for a mistyped flag or subcommand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/cli_suggest.h"
#include "controller/cli/sweep_command.h"
#include "controller/cli/sweep_conflicts.h"

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

// `gdrbench sweep ARGS...` parsed as main.cc parses it, then checked.
absl::Status Check(std::vector<std::string> args) {
  CLI::App app{"gdrbench"};
  SweepOptions o;
  CLI::App* cmd = AddSweepSubcommand(app, o);
  args.insert(args.begin(), "sweep");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return CheckSweepFlagConflicts(o, *cmd);
}

TEST(SweepFlagConflicts, EachContradictionIsRefusedNamingTheFlags) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--agents", "a:1", "--insecure", "--tls-ca", "ca.pem"},
       "--insecure (plaintext to the agents) contradicts --tls-ca"},
      {{"--agents", "a:1", "--json", "--out", "d"}, "--json prints the plan of --dry-run only"},
      {{"--agents", "a:1", "--dry-run", "--resume", "d/journal.bin"},
       "--dry-run prints a new plan and --resume"},
      {{"--agents", "a:1", "--quick-rounds", "3"},
       "--quick-rounds apply to --mode quick only, not --mode all-pairs"},
      {{"--agents", "a:1", "--mode", "ring", "--quick-seed", "7"},
       "--quick-seed apply to --mode quick only, not --mode ring"},
      {{"--agents", "a:1", "--fan-in", "2"}, "--fan-in applies to --mode incast only"},
      {{"--agents", "a:1", "--server-insecure"}, "--server-insecure without --server"},
      {{"--agents", "a:1", "--cluster", "lab"}, "--cluster without --server"},
      {{"--agents", "a:1", "--server", "s:7071", "--server-insecure", "--server-tls-ca", "ca.pem"},
       "--server-insecure (plaintext to the server) contradicts --server-tls-ca"},
  };
  for (const Case& c : cases) {
    absl::Status st = Check(c.args);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << c.says << ": " << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.says));
  }
}

TEST(SweepFlagConflicts, ConsistentFlagsPass) {
  EXPECT_TRUE(Check({"--agents", "a:1", "--out", "d"}).ok());
  EXPECT_TRUE(Check({"--agents", "a:1", "--dry-run", "--json"}).ok());
  EXPECT_TRUE(Check({"--agents", "a:1", "--mode", "quick", "--quick-rounds", "3", "--quick-seed", "9"}).ok());
  EXPECT_TRUE(Check({"--agents", "a:1", "--mode", "incast", "--fan-in", "2"}).ok());
  EXPECT_TRUE(Check({"--agents", "a:1", "--tls-ca", "ca.pem", "--server", "s:1", "--server-insecure"}).ok());
}

// A missing CA named by the inventory is reported at the inventory's line,
// not as a --tls-ca flag nobody gave; --dry-run reads the files (CheckTlsFiles).
TEST(SweepTlsFiles, AMissingInventoryCaNamesTheFileAndLine) {
  const std::string dir = testing::TempDir() + "/sweep-tls-files";
  std::filesystem::create_directories(dir);
  const std::string inv = dir + "/inv.yaml";
  std::ofstream(inv) << "nodes:\n  - name: a\n    address: 127.0.0.1:7070\ntls:\n  ca: " << dir
                     << "/no-such-ca.pem\n";
  CLI::App app{"gdrbench"};
  SweepOptions o;
  AddSweepSubcommand(app, o);
  app.parse(std::vector<std::string>{inv, "--inventory", "sweep"});  // CLI11 takes them last first
  auto c = ToSweepConfig(o);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Status st = CheckTlsFiles(o, *c);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("agents' TLS: " + inv + ":5: tls.ca: cannot read " + dir +
                                                   "/no-such-ca.pem"));
  EXPECT_THAT(std::string(st.message()), ::testing::Not(HasSubstr("--tls-ca")));
  // The same file from the flag names the flag.
  o.common.tls.ca_file = dir + "/no-such-ca.pem";
  auto f = ToSweepConfig(o);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(std::string(CheckTlsFiles(o, *f).message()), HasSubstr("--tls-ca: cannot read"));
  std::filesystem::remove_all(dir);
}

// "Did you mean" over the real sweep subcommand (CLI11 2.1 has none).
TEST(DidYouMean, AMistypedFlagOrSubcommandIsNamedWithItsNearestSpelling) {
  CLI::App app{"gdrbench"};
  app.require_subcommand(1);
  std::string log_level;
  app.add_option("--log-level", log_level);
  SweepOptions o;
  AddSweepSubcommand(app, o);
  app.add_subcommand("node-info", "one node");
  auto suggest = [&](std::vector<const char*> argv) {
    argv.insert(argv.begin(), "gdrbench");
    return SuggestForArgs(app, "gdrbench", static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(suggest({"sweep", "--inventry", "inv.yaml", "--out", "d"}),
            "unknown flag '--inventry' for 'gdrbench sweep'; did you mean '--inventory'?");
  EXPECT_EQ(suggest({"sweep", "--agents", "a:1", "--paralel=4"}),
            "unknown flag '--paralel' for 'gdrbench sweep'; did you mean '--parallel'?");
  EXPECT_EQ(suggest({"sweeep", "--inventory", "inv.yaml"}),
            "unknown command 'sweeep' for 'gdrbench'; did you mean 'sweep'?");
  EXPECT_EQ(suggest({"--log-level", "debug", "node-inf"}),
            "unknown command 'node-inf' for 'gdrbench'; did you mean 'node-info'?");
  // Values are not flags or commands; known words and far-off words get no guess.
  EXPECT_EQ(suggest({"sweep", "--inventory", "sweeep", "--out", "d"}), "");
  EXPECT_EQ(suggest({"sweep", "--xyzzy-plugh"}), "");
  EXPECT_EQ(suggest({"frobnicate"}), "");
}

}  // namespace
}  // namespace gdrbench::controller::cli
