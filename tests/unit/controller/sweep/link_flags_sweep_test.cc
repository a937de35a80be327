// A test whose bandwidth passes but whose ports' counters say the link
// retransmitted is flagged in the matrices' reasons and the summary
// (analysis/link_flags.h), whether the run records its pairs or not
// (SweepConfig::keep_pairs) and whether it is held whole or streamed from
// its journal. The counters are what an agent answers for the rxe trees of
// tests/testdata/counters (their README cites the names: linux v6.1
// drivers/infiniband/sw/rxe/rxe_hw_counters.c): rcvd_seq_err +812 over
// 28,000 packets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/streamed_run.h"
#include "controller/sweep/sweep.h"

namespace gdrbench::controller::sweep {
namespace {

using ::testing::HasSubstr;

void Add(v1::PortCounters* pc, const std::string& name, v1::CounterKind kind, uint64_t delta) {
  v1::CounterChange* c = pc->add_changes();
  c->set_name(name);
  c->set_kind(kind);
  c->set_delta(delta);
}

// node1 -> node2 retransmits on its initiator's port; every other test is quiet.
void Counters(uint32_t src, uint32_t dst, v1::PortCounters* pc) {
  pc->set_device("rxe0");
  pc->set_port(1);
  pc->set_compared(9);
  pc->set_packets(28000);
  Add(pc, "hw_counters/sent_pkts", v1::COUNTER_KIND_PACKETS, 26000);
  Add(pc, "hw_counters/rcvd_pkts", v1::COUNTER_KIND_PACKETS, 2000);
  if (src == 1 && dst == 2) Add(pc, "hw_counters/rcvd_seq_err", v1::COUNTER_KIND_RETRANSMIT, 812);
}

SweepConfig Config(run::FakeCluster& cluster, bool keep_pairs, const std::string& journal) {
  cluster.SetInitiatorCounters(Counters);
  SweepConfig c;
  c.inventory.source = "test";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  c.run_id = "link-flags-sweep-test";
  c.journal_path = journal;
  c.keep_pairs = keep_pairs;
  return c;
}

// The flag as the run shows it: the summary names the test and the cell's reason says it.
void ExpectFlagged(const v1::Run& run) {
  EXPECT_THAT(run.summary(),
              HasSubstr("1 test(s) flagged by link counters for retransmits, the worst node1->node2 rail 0"));
  int flagged = 0;
  for (const auto& m : run.matrices()) {
    for (const auto& cell : m.cells()) {
      if (m.nodes(cell.src()) == "node1" && m.nodes(cell.dst()) == "node2") {
        EXPECT_THAT(cell.reason(), HasSubstr("pass, but the link retransmitted: rcvd_seq_err +812"));
        ++flagged;
      } else {
        EXPECT_THAT(cell.reason(), ::testing::Not(HasSubstr("retransmitted")));
      }
    }
  }
  EXPECT_EQ(flagged, 1);
}

class LinkFlagsSweep : public ::testing::TestWithParam<bool> {
 protected:
  std::string Journal() const {
    return (std::filesystem::temp_directory_path() / ("link-flags." + std::to_string(::getpid()))).string();
  }
  void TearDown() override { std::filesystem::remove(Journal()); }
};

TEST_P(LinkFlagsSweep, HeldWhole) {
  const bool keep_pairs = GetParam();
  run::FakeCluster cluster(4, 1, 100);
  auto run = RunSweep(Config(cluster, keep_pairs, Journal()));
  ASSERT_TRUE(run.ok()) << run.status();
  ExpectFlagged(*run);
  EXPECT_EQ(run->pairs_size(), keep_pairs ? 12 : 0);
}

TEST_P(LinkFlagsSweep, StreamedFromTheJournal) {
  const bool keep_pairs = GetParam();
  run::FakeCluster cluster(4, 1, 100);
  auto streamed = RunSweepStreamed(Config(cluster, keep_pairs, Journal()));
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(streamed->streamed());
  auto run = streamed->Materialize();
  ASSERT_TRUE(run.ok()) << run.status();
  ExpectFlagged(*run);
  EXPECT_EQ(run->pairs_size(), keep_pairs ? 12 : 0);
}

INSTANTIATE_TEST_SUITE_P(KeptPairsOrNot, LinkFlagsSweep, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "KeptPairs" : "NoPairs";
                         });

}  // namespace
}  // namespace gdrbench::controller::sweep
