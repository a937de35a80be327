// The per-test counter deltas on the fixture trees of tests/testdata/counters
// (names from the kernel's rxe, mlx5 and PMA sources: see its README).
#include "agent/counters/port_counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::agent::counters {
namespace {

using ::testing::HasSubstr;

const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/counters/";

Sample Read(const std::string& tree, const std::string& dev) {
  return ReadPort(FsRoot(kTrees + tree), dev, 1, TestCounters());
}

const Change* Find(const Delta& d, const std::string& file) {
  for (const Change& c : d.changes) {
    if (c.file == file) return &c;
  }
  return nullptr;
}

TEST(PortCounters, RxeRetransmissionsAndPacketsAreCounted) {
  Sample before = Read("rxe-before", "rxe0");
  // rxe has no PMA counters/: only the hw_counters of TestCounters() it names.
  EXPECT_EQ(before.values.size(), 9u);
  EXPECT_EQ(before.values.count("counters/symbol_error"), 0u);
  Delta d = Diff(before, Read("rxe-after", "rxe0"));
  EXPECT_TRUE(d.absent.empty());
  EXPECT_EQ(d.compared, 9u);
  const Change* seq = Find(d, "hw_counters/rcvd_seq_err");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->kind, Kind::kRetransmit);
  EXPECT_EQ(seq->delta, 812u);
  EXPECT_TRUE(seq->note.empty());
  ASSERT_NE(Find(d, "hw_counters/completer_retry_err"), nullptr);
  EXPECT_EQ(Find(d, "hw_counters/completer_retry_err")->delta, 9u);
  EXPECT_EQ(Find(d, "hw_counters/duplicate_request")->delta, 4u);
  // Unchanged counters are not listed; RNR counters are not sampled.
  EXPECT_EQ(Find(d, "hw_counters/link_downed"), nullptr);
  EXPECT_EQ(Find(d, "hw_counters/rcvd_rnr_err"), nullptr);
  EXPECT_EQ(d.packets, 26000u + 2000u);
  EXPECT_GE(d.interval_ns, 0);
}

TEST(PortCounters, SaturatedAndClearedCountersAreSaidNotGuessed) {
  Delta d = Diff(Read("mlx5-before", "mlx5_0"), Read("mlx5-after", "mlx5_0"));
  const Change* sym = Find(d, "counters/symbol_error");
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->delta, 0u);  // 65530 -> 65535: at least 5, maybe thousands
  EXPECT_THAT(sym->note, HasSubstr("at its maximum 65535 (saturated)"));
  const Change* down = Find(d, "counters/link_downed");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->delta, 0u);
  EXPECT_THAT(down->note, HasSubstr("went back from 3 to 0"));
  EXPECT_EQ(Find(d, "hw_counters/out_of_sequence")->delta, 50u);
  EXPECT_EQ(Find(d, "hw_counters/np_cnp_sent")->kind, Kind::kCongestion);
  EXPECT_EQ(Find(d, "hw_counters/np_cnp_sent")->delta, 900u);
  EXPECT_EQ(Find(d, "hw_counters/np_ecn_marked_roce_packets")->delta, 1500u);
  // port_xmit_data is sampled as data (4-byte words), apart from the packets.
  ASSERT_NE(Find(d, "counters/port_xmit_data"), nullptr);
  EXPECT_EQ(Find(d, "counters/port_xmit_data")->kind, Kind::kData);
  EXPECT_EQ(Find(d, "counters/port_xmit_data")->delta, 100'000'000u);
  EXPECT_EQ(d.packets, 2'000'000u);
}

TEST(PortCounters, HwCountersThatVanishAreNamed) {
  Delta d = Diff(Read("mlx5-before", "mlx5_0"), Read("mlx5-no-hw", "mlx5_0"));
  const Change* gone = Find(d, "hw_counters/out_of_sequence");
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(gone->delta, 0u);
  EXPECT_EQ(gone->note, "read 10 before the test, absent after it");
  // The PMA counters are still compared (port_xmit_data and port_rcv_data
  // among them).
  EXPECT_EQ(d.compared, 13u);
  Delta back = Diff(Read("mlx5-no-hw", "mlx5_0"), Read("mlx5-before", "mlx5_0"));
  EXPECT_EQ(Find(back, "hw_counters/np_cnp_sent")->note, "absent before the test, 7 after it");
}

TEST(PortCounters, APortWithoutHwCountersComparesItsPmaCounters) {
  Sample s = Read("mlx5-no-hw", "mlx5_0");
  Delta d = Diff(s, s);
  EXPECT_TRUE(d.absent.empty());
  EXPECT_EQ(d.compared, 13u);
  // Only the saturated symbol_error is listed: nothing grew.
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].file, "counters/symbol_error");
}

TEST(PortCounters, NoCountersAtAllSaysWhere) {
  Sample s = Read("no-counters", "mlx5_0");
  EXPECT_TRUE(s.values.empty());
  Delta d = Diff(s, s);
  EXPECT_EQ(d.compared, 0u);
  EXPECT_THAT(d.absent, HasSubstr("no error counters in sysfs for mlx5_0 port 1"));
  EXPECT_THAT(d.absent, HasSubstr("/sys/class/infiniband/mlx5_0/ports/1/counters/"));
  Delta missing = Diff(Read("no-counters", "mlx5_9"), Read("no-counters", "mlx5_9"));
  EXPECT_THAT(missing.absent, HasSubstr("mlx5_9"));
}

TEST(PortCounters, EveryPmaCounterHasTheKernelsWidth) {
  // drivers/infiniband/core/sysfs.c: PORT_PMA_ATTR(symbol_error, 0, 16, 32),
  // (link_downed, 2, 8, 56), (local_link_integrity_errors, 9, 4, 152).
  EXPECT_EQ(FindCounter("counters/symbol_error")->max, 65535u);
  EXPECT_EQ(FindCounter("counters/link_downed")->max, 255u);
  EXPECT_EQ(FindCounter("counters/local_link_integrity_errors")->max, 15u);
  EXPECT_EQ(FindCounter("hw_counters/rcvd_seq_err")->max, 0u);
  EXPECT_EQ(FindCounter("counters/nonexistent"), nullptr);
}

// The bytes on the wire (4-byte words) are sampled, and a 32-bit PMA
// packet or data counter standing at 2^32 - 1 is saturated, not idle.
TEST(PortCounters, DataWordsAreSampledAnd32BitSaturationIsSaid) {
  ASSERT_NE(FindCounter("counters/port_xmit_data"), nullptr);
  EXPECT_EQ(FindCounter("counters/port_rcv_data")->kind, Kind::kData);
  Sample before{.device = "mlx5_0", .port = 1,
                .values = {{"counters/port_xmit_data", 1000}, {"counters/port_xmit_packets", 4294967295ull}},
                .taken_ns = 0};
  Sample after = before;
  after.values["counters/port_xmit_data"] = 4294967295ull;
  after.taken_ns = 1;
  Delta d = Diff(before, after);
  const Change* data = Find(d, "counters/port_xmit_data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->delta, 0u);
  EXPECT_THAT(data->note, HasSubstr("saturated"));
  const Change* pkts = Find(d, "counters/port_xmit_packets");
  ASSERT_NE(pkts, nullptr);
  EXPECT_THAT(pkts->note, HasSubstr("saturated"));
}

// Issue 34 item 10: mlx5's extended error counters (drivers/infiniband/hw/
// mlx5/counters.c extended_err_cnts) are sampled as transport errors (shown,
// never counted as retransmissions); rnr_nak_retry_err (retrans_q_cnts) and
// roce_adp_retrans (roce_accl_cnts) as retransmissions.
TEST(PortCounters, Mlx5TransportErrorAndRetransmitCountersAreSampled) {
  ASSERT_NE(FindCounter("hw_counters/req_cqe_error"), nullptr);
  EXPECT_EQ(FindCounter("hw_counters/req_cqe_error")->kind, Kind::kTransportError);
  ASSERT_NE(FindCounter("hw_counters/resp_remote_access_errors"), nullptr);
  EXPECT_EQ(FindCounter("hw_counters/resp_remote_access_errors")->kind, Kind::kTransportError);
  EXPECT_EQ(FindCounter("hw_counters/rnr_nak_retry_err")->kind, Kind::kRetransmit);
  EXPECT_EQ(FindCounter("hw_counters/roce_adp_retrans")->kind, Kind::kRetransmit);
  Sample before{.device = "mlx5_0", .port = 1,
                .values = {{"hw_counters/req_cqe_error", 7}, {"hw_counters/resp_remote_access_errors", 0}},
                .taken_ns = 0};
  Sample after = before;
  after.values["hw_counters/req_cqe_error"] = 9;
  after.values["hw_counters/resp_remote_access_errors"] = 1;
  after.taken_ns = 1;
  Delta d = Diff(before, after);
  ASSERT_NE(Find(d, "hw_counters/req_cqe_error"), nullptr);
  EXPECT_EQ(Find(d, "hw_counters/req_cqe_error")->delta, 2u);
  EXPECT_EQ(Find(d, "hw_counters/resp_remote_access_errors")->kind, Kind::kTransportError);
  EXPECT_EQ(Find(d, "hw_counters/resp_remote_access_errors")->delta, 1u);
}

}  // namespace
}  // namespace gdrbench::agent::counters
