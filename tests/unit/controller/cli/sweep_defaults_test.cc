// `gdrbench sweep`'s defaults come from the one header
// (common/sweep_limits.h): its --help prints them, its dry-run plan runs
// them, and its flags make the config an empty v1.SweepSpec makes on the
// server. Expected values are read from the header, never written here.
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/sweep_limits.h"
#include "controller/cli/sweep_command.h"
#include "controller/cli/sweep_flags.h"
#include "controller/sweep/spec.h"

namespace gdrbench::controller::cli {
namespace {

namespace limits = sweep_limits;
using ::testing::HasSubstr;

// `gdrbench ARGS...` parsed as main.cc parses it.
struct Parsed {
  CLI::App app{"gdrbench"};
  SweepOptions sweep;
  CLI::App* sweep_cmd = nullptr;
  SweepFlags pair;
  CLI::App* pair_cmd = nullptr;

  explicit Parsed(std::vector<std::string> args) {
    sweep_cmd = AddSweepSubcommand(app, sweep);
    pair_cmd = app.add_subcommand("pair", "one pair");
    AddSweepFlags(pair_cmd, pair, SweepFlagSet::kPair);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  }
};

TEST(SweepDefaults, HelpPrintsTheHeadersDefaultsAndBounds) {
  Parsed p({"sweep", "--agents", "a:1,b:2"});
  const std::string help = p.sweep_cmd->help();
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--sizes TEXT=", sweep::FormatSizes(limits::kDefaultSweepSizes))));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("(default ", limits::kDefaultSweepIterations, "; none with --duration)")));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--mode TEXT=", limits::kDefaultMode)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--quick-rounds UINT:INT in [1 - ", limits::kMaxQuickRounds, "]=",
                                           limits::kDefaultQuickRounds)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--qps UINT:INT in [1 - ", limits::kMaxQps, "]=", limits::kDefaultQps)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--tx-depth UINT:NONNEGATIVE=", limits::kDefaultTxDepth)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--retest-low UINT:INT in [0 - ", limits::kMaxRetestLow, "]=",
                                           limits::kDefaultRetestLow)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--parallel UINT:INT in [1 - ", limits::kMaxParallel, "]=",
                                           limits::kDefaultParallel)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--qp-timeout UINT=", limits::kDefaultQpTimeout)));
  EXPECT_THAT(help, HasSubstr(absl::StrCat("--retries UINT=", limits::kDefaultRetries)));
  const std::string pair_help = p.pair_cmd->help();
  EXPECT_THAT(pair_help, HasSubstr(absl::StrCat("--sizes TEXT=", limits::kDefaultPairSizes)));
  EXPECT_THAT(pair_help, HasSubstr(absl::StrCat("(default ", limits::kDefaultIterations, ")")));
}

TEST(SweepDefaults, TheDryRunPlanRunsTheHeadersDefaults) {
  Parsed p({"sweep", "--agents", "a:1,b:2,c:3", "--dry-run"});
  absl::StatusOr<sweep::SweepConfig> c = ToSweepConfig(p.sweep);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<run::Plan> plan = sweep::PlanWithoutAgents(*c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->params.sizes_bytes(), ::testing::ElementsAreArray(limits::kDefaultSweepSizes));
  EXPECT_EQ(plan->params.iterations(), limits::kDefaultSweepIterations);
  EXPECT_EQ(plan->params.qps(), limits::kDefaultQps);
  EXPECT_EQ(plan->params.tx_depth(), limits::kDefaultTxDepth);
  EXPECT_EQ(plan->params.post_list(), limits::kDefaultPostList);
  EXPECT_EQ(plan->params.qp_timeout(), limits::kDefaultQpTimeout);
  EXPECT_EQ(plan->schedule_options.quick_matchings, limits::kDefaultQuickRounds);
  EXPECT_EQ(c->parallel, limits::kDefaultParallel);
  EXPECT_EQ(c->retest_low, limits::kDefaultRetestLow);
  EXPECT_EQ(c->retries, limits::kDefaultRetries);
  EXPECT_DOUBLE_EQ(c->policy.mad_k(), limits::kDefaultMadK);
  EXPECT_EQ(c->rpc_timeout.count(), limits::kDefaultRpcTimeoutMs);
}

// No flags and an empty request: one config (the CLI's flags fill a spec
// that ConfigFromSpec maps, as the server's request is mapped).
TEST(SweepDefaults, NoFlagsIsTheConfigOfAnEmptySpec) {
  Parsed p({"sweep", "--agents", "a:1,b:2"});
  absl::StatusOr<sweep::SweepConfig> cli = ToSweepConfig(p.sweep);
  absl::StatusOr<sweep::SweepConfig> server = sweep::ConfigFromSpec(v1::SweepSpec());
  ASSERT_TRUE(cli.ok()) << cli.status();
  ASSERT_TRUE(server.ok()) << server.status();
  using google::protobuf::util::MessageDifferencer;
  EXPECT_TRUE(MessageDifferencer::Equals(cli->params, server->params))
      << cli->params.ShortDebugString() << "\nvs\n" << server->params.ShortDebugString();
  EXPECT_TRUE(MessageDifferencer::Equals(cli->policy, server->policy))
      << cli->policy.ShortDebugString() << "\nvs\n" << server->policy.ShortDebugString();
  EXPECT_EQ(cli->schedule.quick_matchings, server->schedule.quick_matchings);
  EXPECT_EQ(cli->parallel, server->parallel);
  EXPECT_EQ(cli->retest_low, server->retest_low);
  EXPECT_EQ(cli->memory, server->memory);
}

TEST(SweepDefaults, BadFlagsNameTheFlag) {
  Parsed p({"sweep", "--agents", "a:1,b:2", "--mode", "incast"});
  EXPECT_THAT(std::string(ToSweepConfig(p.sweep).status().message()), HasSubstr("--mode incast needs --fan-in K"));
  Parsed q({"sweep", "--agents", "a:1,b:2", "--memory", "host,floppy"});
  EXPECT_THAT(std::string(ToSweepConfig(q.sweep).status().message()),
              HasSubstr("memory: expected host, hugepage, gpu or gpu-staged"));
  Parsed r({"sweep", "--agents", "a:1,b:2", "--fan-in", "2"});
  EXPECT_THAT(std::string(ToSweepConfig(r.sweep).status().message()),
              HasSubstr("--fan-in is only for --mode incast, not all-pairs"));
}

}  // namespace
}  // namespace gdrbench::controller::cli
