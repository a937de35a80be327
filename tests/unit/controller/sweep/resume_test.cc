// A resumed sweep's result against an uninterrupted one's: the same plan
// and seed, interrupted part-way and resumed from its journal, gives the
// same matrices (every cell, verdict and reason), blame, summary and, with
// kept pairs, the same pairs; with and without kept pairs (the resume reads
// its journal without building PairResults then).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"
#include "google/protobuf/util/message_differencer.h"

namespace gdrbench::controller::sweep {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

// 6 nodes, 2 rails: a steadily slow link (low cells, retested), a node whose
// targets cannot be opened (failed cells with a reason), the rest at 95.
struct Fleet {
  run::FakeCluster cluster{6, 2, 100};
  Fleet() {
    cluster.SetBandwidth(
        [](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 30.0 : 95.0; });
    cluster.SetOpenTargetError(4, absl::ResourceExhaustedError("node4 has no free target"));
  }
  SweepConfig Config(bool keep_pairs, const std::string& journal) {
    SweepConfig c;
    c.inventory.source = "test";
    c.inventory.nodes = cluster.InventoryNodes();
    c.agents = cluster.agents();
    c.parallel = 2;
    c.params.clear_sizes_bytes();
    c.params.add_sizes_bytes(65536);
    c.params.set_seed(20261205);
    c.keep_pairs = keep_pairs;
    c.journal_path = journal;
    return c;
  }
};

// The pairs in one order, without what differs between two runs of one plan
// (when each test ran and how long it took).
std::vector<v1::PairResult> Comparable(const v1::Run& run) {
  std::vector<v1::PairResult> out(run.pairs().begin(), run.pairs().end());
  for (auto& p : out) {
    p.clear_started_at();
    p.clear_duration_ns();
  }
  std::sort(out.begin(), out.end(), [](const v1::PairResult& a, const v1::PairResult& b) {
    return std::tuple(a.round(), a.src().node(), a.dst().node(), a.rail()) <
           std::tuple(b.round(), b.src().node(), b.dst().node(), b.rail());
  });
  return out;
}

void ExpectSameResult(const v1::Run& resumed, const v1::Run& whole) {
  ASSERT_EQ(resumed.matrices_size(), whole.matrices_size());
  for (int i = 0; i < whole.matrices_size(); ++i) {
    std::string diff;
    MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(resumed.matrices(i), whole.matrices(i))) << "matrix " << i << ": " << diff;
  }
  ASSERT_EQ(resumed.blame_size(), whole.blame_size());
  for (int i = 0; i < whole.blame_size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(resumed.blame(i), whole.blame(i)))
        << resumed.blame(i).DebugString();
  }
  EXPECT_EQ(resumed.summary(), whole.summary());
  EXPECT_EQ(resumed.passed(), whole.passed());
  const auto a = Comparable(resumed), b = Comparable(whole);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(a[i], b[i])) << a[i].DebugString() << "\nvs\n"
                                                        << b[i].DebugString();
  }
}

TEST(SweepResume, AResumedSweepEqualsAnUninterruptedOne) {
  for (bool keep_pairs : {true, false}) {
    SCOPED_TRACE(keep_pairs ? "kept pairs" : "no kept pairs");
    Fleet fleet;
    const std::string whole_journal = TmpPath("resume_whole"), cut_journal = TmpPath("resume_cut");
    auto whole = RunSweep(fleet.Config(keep_pairs, whole_journal));
    ASSERT_TRUE(whole.ok()) << whole.status();
    ASSERT_FALSE(whole->passed());  // the slow link and node4: the comparison has low and failed cells
    ASSERT_GT(whole->blame_size(), 0);

    SweepConfig c = fleet.Config(keep_pairs, cut_journal);
    run::CancelToken cancel;
    size_t finished = 0;
    SweepHooks h;
    h.cancel = &cancel;
    h.on_result = [&](const v1::PairResult&) {
      if (++finished == 17) cancel.Cancel();
    };
    auto first = RunSweep(c, h);
    ASSERT_EQ(first.status().code(), absl::StatusCode::kCancelled) << first.status();
    c.resume = true;
    size_t resumed = 0;
    SweepHooks h2;
    h2.on_start = [&](const SweepStart& s) { resumed = s.resumed_tests; };
    auto second = RunSweep(c, h2);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_GE(resumed, 17u);
    EXPECT_LT(resumed, 60u);  // 6 x 5 x 2 tests: it stopped part-way
    EXPECT_EQ(second->pairs_size(), keep_pairs ? whole->pairs_size() : 0);
    ExpectSameResult(*second, *whole);
    std::filesystem::remove(whole_journal);
    std::filesystem::remove(cut_journal);
  }
}

// Without kept pairs too, a journal of another plan is refused before a
// test runs.
TEST(SweepResume, AResumeWithoutKeptPairsOfAnotherPlanIsRefused) {
  Fleet fleet;
  SweepConfig c = fleet.Config(false, TmpPath("resume_other_plan"));
  ASSERT_TRUE(RunSweep(c).ok());
  const uint64_t sweeps = fleet.cluster.sweeps();
  c.resume = true;
  c.params.set_iterations(7);
  auto again = RunSweep(c);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(again.status().message()),
              ::testing::HasSubstr("the journal was written for plan"));
  EXPECT_EQ(fleet.cluster.sweeps(), sweeps);
  std::filesystem::remove(c.journal_path);
}

}  // namespace
}  // namespace gdrbench::controller::sweep
