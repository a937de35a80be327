// The sweep journal as a file: resume after a kill (cross-rail too), group
// commit, results the plan does not describe, torn and corrupt files, and
// the previous release's format-1 journal (tests/testdata/journal). Its
// records: journal_records_test.cc.
#include "controller/run/journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "controller/run/pair_tester.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"
#include "tests/unit/controller/run/journal_testing.h"

namespace gdrbench::controller::run {
namespace {

using journal_testing::DoneOf;
using journal_testing::Header;
using journal_testing::PlanFor;
using journal_testing::TmpPath;
using ::testing::HasSubstr;

// A cross-rail run killed part way resumes with only the tests the journal
// lacks: every (src, dst, rail, target rail) once in all.
TEST(Journal, CrossRailResumeRunsEachLaneTestOnce) {
  FakeCluster c(4, 2, 100);
  auto plan = PlanFor(c, "host", schedule::Mode::kCrossRail);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->schedule.tests(), 24u);  // 12 ordered pairs x (0->1, 1->0)
  const std::string path = TmpPath("journal_crossrail_resume");
  {
    auto w = JournalWriter::Create(path, Header(*plan, "x1"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok());
    AgentPairTester tester(c.agents(), {});
    RunnerOptions ro;
    size_t n = 0;
    ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) -> absl::Status {
      if (n++ >= 9) return absl::AbortedError("controller killed");
      return (*w)->Append(r);
    };
    EXPECT_FALSE(SweepRunner(*plan, tester, ro).Run().ok());
  }
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ(j->pairs.size(), 9u);
  std::unordered_set<std::string> done;
  for (const auto& p : j->pairs) {
    EXPECT_TRUE(p.has_dst_rail());
    EXPECT_NE(p.dst_rail(), p.rail());
    done.insert(TestKey(p));
  }
  ASSERT_EQ(done.size(), 9u);
  auto w = JournalWriter::Reopen(path, j->valid_bytes, DescribePlan(*plan));
  ASSERT_TRUE(w.ok()) << w.status();
  AgentPairTester tester(c.agents(), {});
  RunnerOptions ro;
  std::vector<std::string> rerun;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    rerun.push_back(TestKey(r));
    return (*w)->Append(r);
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run(DoneOf(*plan, j->pairs)).ok());
  EXPECT_EQ(rerun.size(), 15u);
  for (const auto& k : rerun) EXPECT_FALSE(done.count(k)) << "repeated " << k;
  ASSERT_TRUE((*w)->Flush().ok());
  auto all = ReadJournal(path);
  ASSERT_TRUE(all.ok());
  std::set<std::tuple<std::string, std::string, uint32_t, uint32_t>> tests;
  for (const auto& p : all->pairs) tests.insert({p.src().node(), p.dst().node(), p.rail(), p.dst_rail()});
  EXPECT_EQ(tests.size(), 24u);
  std::filesystem::remove(path);
}

TEST(Journal, ResumeRunsOnlyWhatWasNotFinished) {
  FakeCluster c(6, 1, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = TmpPath("journal_resume");
  std::vector<std::string> first;
  {
    auto w = JournalWriter::Create(path, Header(*plan, "r1"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok()) << w.status();
    AgentPairTester tester(c.agents(), {});
    RunnerOptions ro;
    // The controller "dies" after 7 tests: on_result fails from then on.
    ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) -> absl::Status {
      if (first.size() >= 7) return absl::AbortedError("controller killed");
      first.push_back(r.SerializeAsString());
      return (*w)->Append(r);
    };
    EXPECT_FALSE(SweepRunner(*plan, tester, ro).Run().ok());
  }
  // A torn tail: half a record written when the process died.
  {
    FILE* f = std::fopen(path.c_str(), "ab");
    std::fwrite("\x40\x00\x00\x00\x01\x02", 1, 6, f);
    std::fclose(f);
  }
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE(j->torn_tail);
  EXPECT_EQ(j->header.run_id(), "r1");
  ASSERT_EQ(j->pairs.size(), 7u);
  // Each worker thread appends to its own buffer (journal.h), so records of
  // different threads may come back in another order: compared as a set.
  std::unordered_set<std::string> written(first.begin(), first.end());
  std::unordered_set<std::string> done;
  for (size_t i = 0; i < j->pairs.size(); ++i) {
    EXPECT_EQ(written.erase(j->pairs[i].SerializeAsString()), 1u) << "not written: " << j->pairs[i].DebugString();
    done.insert(TestKey(j->pairs[i]));
  }
  EXPECT_TRUE(written.empty());

  const uint64_t sweeps_before = c.sweeps();
  auto w = JournalWriter::Reopen(path, j->valid_bytes, DescribePlan(*plan));
  ASSERT_TRUE(w.ok()) << w.status();
  AgentPairTester tester(c.agents(), {});
  RunnerOptions ro;
  std::vector<std::string> rerun;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    rerun.push_back(TestKey(r));
    return (*w)->Append(r);
  };
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run(DoneOf(*plan, j->pairs)).ok());
  EXPECT_EQ(rerun.size(), 30u - 7u);
  for (const auto& k : rerun) EXPECT_FALSE(done.count(k)) << "repeated " << k;
  EXPECT_EQ(c.sweeps() - sweeps_before, 23u);
  ASSERT_TRUE((*w)->Flush().ok());
  auto all = ReadJournal(path);
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->torn_tail);
  EXPECT_EQ(all->pairs.size(), 30u);
  std::filesystem::remove(path);
}

TEST(Journal, GroupCommitWritesWithinTheWindowAndPerRecordWritesAtOnce) {
  FakeCluster c(2, 1, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = TmpPath("journal_window");
  v1::PairResult r;
  FillIdentity(PairTestSpec{&*plan, schedule::Test{0, 1, 0, false}, 0}, &r);
  {
    JournalWriter::Options o;
    o.group_window = std::chrono::microseconds(0);
    auto w = JournalWriter::Create(path, Header(*plan, "w"), DescribePlan(*plan), o);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(r).ok());
    auto j = ReadJournal(path);  // no flush: written before Append returned
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->pairs.size(), 1u);
  }
  {
    JournalWriter::Options o;
    o.group_window = std::chrono::microseconds(1000);
    auto w = JournalWriter::Create(path, Header(*plan, "w"), DescribePlan(*plan), o);
    ASSERT_TRUE(w.ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*w)->Append(r).ok());
    size_t seen = 0;
    for (int tries = 0; tries < 500 && seen < 3; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto j = ReadJournal(path);
      ASSERT_TRUE(j.ok());
      seen = j->pairs.size();
    }
    EXPECT_EQ(seen, 3u);  // the flusher wrote them without Flush()
  }
  std::filesystem::remove(path);
}

TEST(Journal, AResultThePlanDoesNotDescribeIsRefused) {
  FakeCluster c(3, 1, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = TmpPath("journal_foreign");
  auto w = JournalWriter::Create(path, Header(*plan, "f"), DescribePlan(*plan));
  ASSERT_TRUE(w.ok());
  v1::PairResult r;
  FillIdentity(PairTestSpec{&*plan, schedule::Test{0, 1, 0, false}, 0}, &r);
  v1::PairResult stranger = r;
  stranger.mutable_dst()->set_node("node9");
  absl::Status st = (*w)->Append(stranger);
  EXPECT_EQ(st.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(st.message(), HasSubstr("node0->node9"));
  v1::PairResult other_nic = r;
  other_nic.mutable_src()->set_nic_device("nic7");
  EXPECT_THAT((*w)->Append(other_nic).message(), HasSubstr("does not carry the plan's endpoints"));
  EXPECT_TRUE((*w)->Append(r).ok());
  std::filesystem::remove(path);
}

TEST(Journal, MissingHeaderlessOrCorruptFilesAreErrors) {
  EXPECT_EQ(ReadJournal("/nonexistent/j").status().code(), absl::StatusCode::kNotFound);
  const std::string path = TmpPath("journal_bad");
  std::fclose(std::fopen(path.c_str(), "wb"));
  EXPECT_EQ(ReadJournal(path).status().code(), absl::StatusCode::kDataLoss);

  FakeCluster c(3, 1, 100);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  uint64_t head = 0;
  {
    auto w = JournalWriter::Create(path, Header(*plan, "c"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok());
    head = std::filesystem::file_size(path);  // Create wrote the header and the plan
    v1::PairResult r;
    FillIdentity(PairTestSpec{&*plan, schedule::Test{0, 1, 0, false}, 0}, &r);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*w)->Append(r).ok());
  }
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    data = ss.str();
  }
  const size_t record = (data.size() - head) / 3;  // three equal records
  auto flipped = [&](size_t at) {
    std::string bad = data;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    return ReadJournal(path);
  };
  // Inside the last record: a torn tail, the others kept.
  auto last = flipped(head + 2 * record + record / 2);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->torn_tail);
  EXPECT_EQ(last->pairs.size(), 2u);
  EXPECT_EQ(last->valid_bytes, head + 2 * record);
  // Inside the second: the file is damaged, not merely cut short.
  auto middle = flipped(head + record + record / 2);
  EXPECT_EQ(middle.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(middle.status().message(), HasSubstr("record at byte " + std::to_string(head + record)));
  std::filesystem::remove(path);
}

TEST(Journal, Format1IsReadButNotContinued) {
  const std::string dir = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/journal/";
  auto j = ReadJournal(dir + "journal-format1.bin");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->format, 1u);
  EXPECT_FALSE(j->torn_tail);
  EXPECT_EQ(j->header.run_id(), "20261201-122244-b594");
  ASSERT_EQ(j->pairs.size(), 2u);
  // As in the run.json of the same sweep.
  EXPECT_EQ(j->pairs[0].src().node(), "agent0");
  EXPECT_EQ(j->pairs[0].dst().agent_address(), "127.0.0.1:40491");
  EXPECT_EQ(j->pairs[0].status(), v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(j->pairs[0].attempts(), 2u);
  EXPECT_EQ(j->pairs[0].duration_ns(), 730039);
  EXPECT_EQ(j->pairs[1].round(), 1u);
  EXPECT_EQ(j->pairs[1].reason(),
            "OpenTarget on agent0: OpenTarget on 127.0.0.1:42287: RDMA device 'none0' does not exist on this "
            "node (present: none)");

  const std::string copy = TmpPath("journal_format1");
  std::filesystem::copy_file(dir + "journal-format1.bin", copy, std::filesystem::copy_options::overwrite_existing);
  auto w = JournalWriter::Reopen(copy, j->valid_bytes, v1::JournalPlan());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(w.status().message(), HasSubstr("is format 1"));
  EXPECT_THAT(w.status().message(), HasSubstr("gdrbench runs upload " + copy));
  EXPECT_EQ(std::filesystem::file_size(copy), std::filesystem::file_size(dir + "journal-format1.bin"));
  std::filesystem::remove(copy);
}

}  // namespace
}  // namespace gdrbench::controller::run
