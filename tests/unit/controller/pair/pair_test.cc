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

// --memory host,gpu-staged,gpu: each kind's table (gpu-staged with the
// staging copy and copy + wire), then the kinds side by side with the ratios
// and the gdr blame of a failed gpu half.
TEST(FormatPairReport, ShowsEachKindThenTheKindsSideBySide) {
  v1::PairResult r;
  r.mutable_src()->set_memory("host");
  r.mutable_dst()->set_memory("host");
  r.set_status(v1::RESULT_STATUS_OK);
  auto* s = r.add_sizes();
  s->set_size_bytes(1 << 20);
  s->set_bw_avg_gbps(0.4);
  s->set_status(v1::RESULT_STATUS_OK);
  v1::PairResult* staged = r.add_memory_halves();
  staged->mutable_src()->set_memory("gpu-staged:0");
  staged->mutable_dst()->set_memory("gpu-staged:0");
  staged->set_status(v1::RESULT_STATUS_OK);
  *staged->add_sizes() = *s;
  staged->mutable_sizes(0)->set_staged_copy_gbytes_per_s(38.77);
  staged->mutable_sizes(0)->set_staged_bw_avg_gbps(0.2);
  v1::PairResult* gpu = r.add_memory_halves();
  gpu->mutable_src()->set_memory("gpu:0");
  gpu->mutable_dst()->set_memory("gpu:0");
  gpu->set_status(v1::RESULT_STATUS_ERROR);
  gpu->set_reason("OpenTarget on b: gpu:0: no NVIDIA driver");
  r.set_staged_host_ratio(0.5);
  const std::string t = FormatPairReport(r, false);
  EXPECT_THAT(t, HasSubstr("memory gpu-staged:0 -> gpu-staged:0 (next kind, same pair)"));
  EXPECT_THAT(t, HasSubstr("staging copy[GB/s]"));
  EXPECT_THAT(t, HasSubstr("38.770"));
  EXPECT_THAT(t, HasSubstr("result: RESULT_STATUS_ERROR: OpenTarget on b: gpu:0: no NVIDIA driver"));
  EXPECT_THAT(t, HasSubstr("host: 0.40 Gb/s at 1048576 B"));
  EXPECT_THAT(t, HasSubstr("gpu-staged: 0.40 Gb/s at 1048576 B on the wire, 0.20 Gb/s copy + wire (staging copy 38.77 GB/s)"));
  EXPECT_THAT(t, HasSubstr("gpu: ERROR (OpenTarget on b: gpu:0: no NVIDIA driver)"));
  EXPECT_THAT(t, HasSubstr("gpu-staged (copy + wire)/host 0.500"));
  EXPECT_THAT(t, HasSubstr("blame gdr: gpu memory ERROR"));
  // One kind: the table alone, as before.
  r.clear_memory_halves();
  EXPECT_EQ(FormatPairReport(r, false), FormatPairTable(r, false));
  EXPECT_EQ(FormatMemoryKinds(r), "");
}

TEST(ToSweepParams, ConnectionModeGidIndexAndTestKind) {
  SweepFlags f;
  auto p = ToSweepParams(f);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cm(), v1::CONNECTION_MODE_AUTO);
  EXPECT_FALSE(p->has_gid_index());
  EXPECT_EQ(p->test(), v1::TEST_KIND_WRITE_BW);
  f.cm = "oob";
  f.gid_index = 3;
  f.test = "write_lat";
  p = ToSweepParams(f);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(p->gid_index(), 3);
  EXPECT_EQ(p->test(), v1::TEST_KIND_WRITE_LAT);
  f.cm = "ipoib";
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--cm 'ipoib'"));
  f.cm = "rdma_cm";
  f.gid_index = 256;
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--gid-index 256"));
  f.gid_index = -1;
  f.test = "read_bw";
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("--test 'read_bw'"));
  f.test = "write_lat";
  f.bidirectional = true;
  EXPECT_THAT(std::string(ToSweepParams(f).status().message()), HasSubstr("ping-pong"));
}

// The columns are ib_write_lat's (perftest 4.5 print_report_lat), as a real
// run prints them (a ConnectX capture: " #bytes #iterations    t_min[usec]
// t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%
// percentile[usec]   99.9% percentile[usec]", then "2  1000  1.76  6.12
// 1.79  1.80  0.06  1.88 ...").
TEST(FormatPairTable, WriteLatencyUsesIbWriteLatsColumns) {
  v1::PairResult r;
  r.set_status(v1::RESULT_STATUS_OK);
  v1::SizeResult* s = r.add_sizes();
  s->set_size_bytes(2);
  s->set_iterations(1000);
  v1::LatencyResult* l = s->mutable_latency();
  l->set_t_min_us(1.76);
  l->set_t_max_us(6.12);
  l->set_t_typical_us(1.79);
  l->set_t_avg_us(1.80);
  l->set_t_stdev_us(0.06);
  l->set_p99_us(1.88);
  l->set_p999_us(6.12);
  r.mutable_summary()->set_perftest_command("ib_write_lat -d mlx5_0 -x 3 -s 2 -n 1000 -I 220");
  std::string t = FormatPairTable(r, false);
  for (const char* col : {"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]",
                          "t_avg[usec]", "t_stdev[usec]", "99% percentile[usec]",
                          "99.9% percentile[usec]"}) {
    EXPECT_THAT(t, HasSubstr(col));
  }
  EXPECT_THAT(t, HasSubstr(" 2       1000        1.76        6.12        1.79            1.80"));
  EXPECT_THAT(t, HasSubstr("ib_write_lat -d mlx5_0"));
  EXPECT_THAT(t, ::testing::Not(HasSubstr("BW average")));
}

}  // namespace
}  // namespace gdrbench::controller::cli
