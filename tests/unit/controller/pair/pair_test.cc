#include "controller/cli/pair_command.h"
#include "controller/cli/sweep_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

TEST(ParseSizes, AllIsPerftestDashA) {
  auto s = ParseSizes("all");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 23u);
  EXPECT_EQ(s->front(), 2u);
  EXPECT_EQ(s->back(), 8u << 20);
}

TEST(ParseSizes, ListWithSuffixesIsSortedAndDeduplicated) {
  auto s = ParseSizes("1M, 64K,2,64KiB,4kb");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<uint64_t>{2, 4096, 65536, 1 << 20}));
}

TEST(ParseSizes, PowerOfTwoRange) {
  auto s = ParseSizes("64K-1M");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<uint64_t>{65536, 131072, 262144, 524288, 1 << 20}));
}

TEST(ParseSizes, BadInputSaysWhatIsAccepted) {
  for (const char* bad : {"", "abc", "0", "3-8", "8M-2", "1-2-3", "2T", "-5", "2G,4G"}) {
    auto s = ParseSizes(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(std::string(ParseSizes("abc").status().message()), HasSubstr("'all'"));
}

TEST(ToSweepParams, DefaultsLeaveZerosForTheAgentsDefaults) {
  SweepFlags f;
  auto p = ToSweepParams(f);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->sizes_bytes_size(), 23);
  EXPECT_EQ(p->iterations(), 0u);  // the agent applies perftest's 5000
  EXPECT_EQ(p->cq_moderation(), 0u);
  EXPECT_EQ(p->tx_depth(), 128u);
  EXPECT_EQ(p->memory(), "host");
}

TEST(ToSweepParams, DurationInSecondsBecomesNanoseconds) {
  SweepFlags f;
  f.duration_s = 1.5;
  auto p = ToSweepParams(f);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->duration_ns(), 1'500'000'000);
}

TEST(ToSweepParams, RejectsContradictionsNamingTheFlag) {
  SweepFlags f;
  f.duration_s = 2;
  f.iterations = 10;
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--iterations"));
  f = SweepFlags{};
  f.sizes = "3-9";
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--sizes"));
  f = SweepFlags{};
  f.duration_s = -1;
  EXPECT_EQ(ToSweepParams(f).status().code(), absl::StatusCode::kInvalidArgument);
  f = SweepFlags{};
  f.qps = 0;
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--qps"));
}

TEST(FormatPairTable, RowsCarryUnitsVerifyAndTheSumForBidirectional) {
  v1::PairResult r;
  r.mutable_src()->set_nic_device("rxe0");
  r.mutable_dst()->set_nic_device("rxe1");
  r.mutable_summary()->set_perftest_command("ib_write_bw -d rxe0 -x 1 -a");
  auto* s = r.add_sizes();
  s->set_size_bytes(65536);
  s->set_iterations(200);
  s->set_bw_avg_gbps(0.4);
  s->set_bw_peak_gbps(0.5);
  s->set_verified(true);
  auto* rev = r.add_reverse_sizes();
  rev->set_size_bytes(65536);
  rev->set_bw_avg_gbps(0.3);
  r.set_status(v1::RESULT_STATUS_OK);
  std::string t = FormatPairTable(r, true);
  EXPECT_THAT(t, HasSubstr("BW average[Gb/s]"));
  EXPECT_THAT(t, HasSubstr("BW sum[Gb/s]"));
  EXPECT_THAT(t, HasSubstr("0.700000"));
  EXPECT_THAT(t, HasSubstr(" yes"));
  EXPECT_THAT(t, HasSubstr("ib_write_bw -d rxe0 -x 1 -a"));
  EXPECT_THAT(t, HasSubstr("result: RESULT_STATUS_OK"));
}

}  // namespace
}  // namespace gdrbench::controller::cli
