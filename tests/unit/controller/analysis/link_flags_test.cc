// Link flags (analysis/link_flags.h): an OK test flagged by its ports'
// counters. The counters are what an agent answers for the trees of
// tests/testdata/counters (rxe: rcvd_seq_err +812 over 28,000 packets; mlx5:
// out_of_sequence +50 over 2,000,000, CNPs +900).
#include "controller/analysis/link_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/analysis/verdicts.h"

namespace gdrbench::controller::analysis {
namespace {

using ::testing::HasSubstr;

void Add(v1::PortCounters* pc, const std::string& name, v1::CounterKind kind, uint64_t delta,
         const std::string& note = "") {
  v1::CounterChange* c = pc->add_changes();
  c->set_name(name);
  c->set_kind(kind);
  c->set_delta(delta);
  c->set_note(note);
}

v1::PortCounters Rxe(uint64_t seq_err) {
  v1::PortCounters pc;
  pc.set_device("rxe2");
  pc.set_port(1);
  pc.set_compared(9);
  pc.set_packets(28000);
  Add(&pc, "hw_counters/rcvd_seq_err", v1::COUNTER_KIND_RETRANSMIT, seq_err);
  Add(&pc, "hw_counters/sent_pkts", v1::COUNTER_KIND_PACKETS, 26000);
  Add(&pc, "hw_counters/rcvd_pkts", v1::COUNTER_KIND_PACKETS, 2000);
  return pc;
}

v1::PortCounters Quiet(const std::string& dev) {
  v1::PortCounters pc;
  pc.set_device(dev);
  pc.set_port(1);
  pc.set_compared(9);
  pc.set_packets(28000);
  return pc;
}

v1::PairResult Pair(v1::PortCounters src, v1::PortCounters dst) {
  v1::PairResult p;
  p.mutable_src()->set_node("node01");
  p.mutable_dst()->set_node("node02");
  p.set_rail(0);
  p.set_status(v1::RESULT_STATUS_OK);
  *p.mutable_src_counters() = std::move(src);
  *p.mutable_dst_counters() = std::move(dst);
  return p;
}

TEST(LinkFlags, RetransmissionsAboveTheFractionFlagTheTestNamingNodeAndDevice) {
  v1::PairResult p = Pair(Quiet("rxe1"), Rxe(812));
  EXPECT_EQ(LinkFlag(p, DefaultPolicy()),
            "the link retransmitted: rcvd_seq_err +812 on node02 rxe2 (2.9 % of 28000 packets)");
}

TEST(LinkFlags, RetransmissionsWithinTheFractionDoNot) {
  // 28 of 28,000 packets is 0.1 %: at the default limit, not past it.
  EXPECT_EQ(LinkFlag(Pair(Quiet("rxe1"), Rxe(28)), DefaultPolicy()), "");
  EXPECT_THAT(LinkFlag(Pair(Quiet("rxe1"), Rxe(29)), DefaultPolicy()), HasSubstr("+29"));
  v1::VerdictPolicy p = DefaultPolicy();
  p.set_min_retransmits(100);
  EXPECT_EQ(LinkFlag(Pair(Quiet("rxe1"), Rxe(99)), p), "");
  p.set_max_retransmit_fraction(0.01);
  EXPECT_EQ(LinkFlag(Pair(Quiet("rxe1"), Rxe(200)), p), "");  // 0.7 %
  EXPECT_NE(LinkFlag(Pair(Quiet("rxe1"), Rxe(300)), p), "");  // 1.07 %
}

TEST(LinkFlags, WithoutAPacketCounterAnyRetransmissionFlags) {
  v1::PortCounters pc = Rxe(1);
  pc.set_packets(0);
  pc.mutable_changes()->DeleteSubrange(1, 2);
  EXPECT_EQ(LinkFlag(Pair(Quiet("rxe1"), pc), DefaultPolicy()),
            "the link retransmitted: rcvd_seq_err +1 on node02 rxe2 (the port has no packet counter)");
}

TEST(LinkFlags, AnyLinkCounterGrowthFlagsFlapsApartFromErrors) {
  v1::PortCounters src = Quiet("mlx5_0");
  Add(&src, "counters/link_downed", v1::COUNTER_KIND_LINK, 1);
  Add(&src, "counters/symbol_error", v1::COUNTER_KIND_LINK, 5);
  EXPECT_EQ(LinkFlag(Pair(src, Quiet("mlx5_1")), DefaultPolicy()),
            "the link flapped: link_downed +1 on node01 mlx5_0; "
            "the link erred: symbol_error +5 on node01 mlx5_0");
}

TEST(LinkFlags, CongestionAndUncomparableCountersFlagNothing) {
  v1::PortCounters dst = Quiet("mlx5_1");
  Add(&dst, "hw_counters/np_cnp_sent", v1::COUNTER_KIND_CONGESTION, 900);
  Add(&dst, "hw_counters/np_ecn_marked_roce_packets", v1::COUNTER_KIND_CONGESTION, 1500);
  Add(&dst, "counters/symbol_error", v1::COUNTER_KIND_LINK, 0, "at its maximum 65535 (saturated)");
  Add(&dst, "counters/link_downed", v1::COUNTER_KIND_LINK, 0, "went back from 3 to 0");
  EXPECT_EQ(LinkFlag(Pair(Quiet("mlx5_0"), dst), DefaultPolicy()), "");
}

TEST(LinkFlags, OnlyOkTestsAndOnlyWhenThePolicyJudgesCounters) {
  v1::PairResult p = Pair(Quiet("rxe1"), Rxe(812));
  p.set_status(v1::RESULT_STATUS_FAILED);
  EXPECT_EQ(LinkFlag(p, DefaultPolicy()), "");
  p.set_status(v1::RESULT_STATUS_OK);
  v1::VerdictPolicy ignore = DefaultPolicy();
  ignore.set_ignore_link_counters(true);
  EXPECT_EQ(LinkFlag(p, ignore), "");
  // A test from an agent that sent no counters (an older agent) is not flagged.
  v1::PairResult bare;
  bare.set_status(v1::RESULT_STATUS_OK);
  EXPECT_EQ(LinkFlag(bare, DefaultPolicy()), "");
}

TEST(LinkFlags, FlagLinksMarksThePassCellAndCountsInTheSummary) {
  v1::Run run;
  run.set_summary("PASS: 2/2 cells pass");
  run.set_passed(true);
  *run.add_pairs() = Pair(Quiet("rxe1"), Rxe(812));
  v1::PairResult back = Pair(Quiet("rxe2"), Quiet("rxe1"));
  back.mutable_src()->set_node("node02");
  back.mutable_dst()->set_node("node01");
  *run.add_pairs() = back;
  v1::BandwidthMatrix* m = run.add_matrices();
  m->set_rail(0);
  m->add_nodes("node01");
  m->add_nodes("node02");
  for (auto [s, d] : {std::pair{0u, 1u}, std::pair{1u, 0u}}) {
    v1::MatrixCell* c = m->add_cells();
    c->set_src(s);
    c->set_dst(d);
    c->set_status(v1::RESULT_STATUS_OK);
    c->set_verdict("pass");
  }
  EXPECT_EQ(FlagLinks(DefaultPolicy(), &run), 1u);
  EXPECT_THAT(run.pairs(0).link_flag(), HasSubstr("rcvd_seq_err +812 on node02 rxe2"));
  EXPECT_EQ(run.pairs(1).link_flag(), "");
  EXPECT_THAT(m->cells(0).reason(), HasSubstr("pass, but the link retransmitted"));
  EXPECT_EQ(m->cells(1).reason(), "");
  EXPECT_EQ(run.summary(),
            "PASS: 2/2 cells pass; 1 test(s) flagged by link counters for retransmits, the worst "
            "node01->node02 rail 0 (2.9 % of its packets)");
  EXPECT_TRUE(run.passed());  // a flag is not a failure
}

// A run streamed from its journal (controller/sweep/streamed_run.h) keeps
// compact matrices and only its flagged pairs: the same flags, cell reasons
// (a pass cell's and a low cell's) and summary as the whole run's.
TEST(LinkFlags, CompactMatricesGetTheReasonsAndSummaryOfTheWholeRun) {
  std::vector<v1::PairResult> pairs = {Pair(Quiet("rxe1"), Rxe(812)), Pair(Quiet("rxe2"), Quiet("rxe1")),
                                       Pair(Rxe(900), Quiet("rxe2"))};
  pairs[1].mutable_src()->set_node("node02");
  pairs[1].mutable_dst()->set_node("node01");
  pairs[2].mutable_src()->set_node("node02");
  pairs[2].mutable_dst()->set_node("node03");
  MatrixSet set({"node01", "node02", "node03"});
  for (auto& p : pairs) {
    v1::SizeResult* s = p.add_sizes();
    s->set_size_bytes(65536);
    s->set_status(v1::RESULT_STATUS_OK);
    s->set_bw_avg_gbps(&p == &pairs[2] ? 30 : 95);
    p.set_expected_gbps(100);
    set.Add(p);
  }
  Judge(set, DefaultPolicy(), nullptr, {});
  Matrix& m = *set.matrices()[0];
  m.reasons[1 * 3 + 2] = "below 90 % of the link";  // the low cell's own reason
  m.at(1, 2).verdict = Verdict::kLow;

  v1::Run run;
  run.set_summary("FAIL: 2/3 cells pass");
  for (const auto& p : pairs) *run.add_pairs() = p;
  *run.add_matrices() = ToProto(m, set.nodes());
  EXPECT_EQ(FlagLinks(DefaultPolicy(), &run), 2u);

  std::vector<v1::PairResult> flagged = {pairs[0], pairs[2]};  // the ones LinkFlag names
  std::string summary = "FAIL: 2/3 cells pass";
  EXPECT_EQ(FlagLinks(DefaultPolicy(), &flagged, &set, &summary), 2u);
  EXPECT_EQ(summary, run.summary());
  EXPECT_EQ(flagged[0].link_flag(), run.pairs(0).link_flag());
  EXPECT_EQ(flagged[1].link_flag(), run.pairs(2).link_flag());
  const v1::BandwidthMatrix compact = ToProto(*set.matrices()[0], set.nodes());
  ASSERT_EQ(compact.cells_size(), run.matrices(0).cells_size());
  for (int i = 0; i < compact.cells_size(); ++i) {
    EXPECT_EQ(compact.cells(i).reason(), run.matrices(0).cells(i).reason()) << i;
  }
  EXPECT_THAT(compact.cells(0).reason(), HasSubstr("pass, but the link retransmitted"));
  EXPECT_THAT(compact.cells(2).reason(), HasSubstr("below 90 % of the link; the link retransmitted"));
}

TEST(LinkFlags, AMemoryKindsHalfIsFlaggedOnItsOwnCounters) {
  v1::Run run;
  run.set_summary("PASS: 1/1 cells pass");
  v1::PairResult& p = *run.add_pairs() = Pair(Quiet("rxe1"), Quiet("rxe2"));
  v1::PairResult* half = p.add_memory_halves();
  *half = Pair(Rxe(812), Quiet("rxe2"));
  half->mutable_src()->set_memory("gpu:0");
  EXPECT_EQ(FlagLinks(DefaultPolicy(), &run), 1u);
  EXPECT_EQ(run.pairs(0).link_flag(), "");
  EXPECT_THAT(run.pairs(0).memory_halves(0).link_flag(), HasSubstr("rcvd_seq_err +812 on node01 rxe2"));
  EXPECT_THAT(run.summary(),
              HasSubstr("1 test(s) flagged by link counters for retransmits, the worst node01->node02 rail 0 (gpu:0)"));
}

// Issue 29: a healthy lab sweep had 9 of 12 tests flagged for retransmits, each named in the
// summary. Error counters are named test by test; retransmits are one count with the worst.
TEST(LinkFlags, ErrorsAreNamedRetransmitsAreCountedWithTheWorst) {
  v1::Run run;
  run.set_summary("PASS: 6/6 cells pass");
  const char* names[] = {"node01", "node02", "node03", "node04"};
  auto pair = [&](int s, int d, v1::PortCounters dst) {
    v1::PairResult p = Pair(Quiet("rxe1"), std::move(dst));
    p.mutable_src()->set_node(names[s]);
    p.mutable_dst()->set_node(names[d]);
    *run.add_pairs() = p;
  };
  pair(0, 1, Rxe(812));   // 2.9 %
  pair(1, 2, Rxe(2000));  // 7.1 %: the worst
  pair(2, 3, Rxe(900));   // 3.2 %
  v1::PortCounters erred = Quiet("rxe2");
  Add(&erred, "counters/symbol_error", v1::COUNTER_KIND_LINK, 3);
  pair(3, 0, erred);
  pair(0, 2, Quiet("rxe2"));
  EXPECT_EQ(FlagLinks(DefaultPolicy(), &run), 4u);
  EXPECT_EQ(run.summary(),
            "PASS: 6/6 cells pass; 1 test(s) flagged by link counters for link errors: node04->node01 rail 0; "
            "3 test(s) flagged by link counters for retransmits, the worst node02->node03 rail 0 (7.1 % of its "
            "packets)");
  EXPECT_THAT(run.pairs(3).link_flag(), HasSubstr("the link erred: symbol_error +3 on node01 rxe2"));
}

}  // namespace
}  // namespace gdrbench::controller::analysis
