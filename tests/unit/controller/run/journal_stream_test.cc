// Reading a journal back as a resume does (StreamJournal): every record
// handed over once, in a window smaller than the file, and each fault of the
// file either one clear error or a recovery the summary states: a tail cut
// at every byte, a damaged record in the middle, a garbled length, a
// visitor's own error. And DoneTests, the resumed tests' keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/run/journal.h"
#include "controller/run/pair_tester.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

absl::StatusOr<Plan> PlanOf(FakeCluster& c) {
  v1::SweepParams p;
  p.add_sizes_bytes(1 << 20);
  p.set_iterations(100);
  return c.PlanFor(p);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// A journal of `records` results of test 0 -> 1 on rail 0, round i, each with
// a reason (so the records are not all alike); `head`: the bytes of the
// header and plan.
struct Written {
  std::string path;
  uint64_t head = 0;
  std::vector<uint64_t> ends;  // each record's end offset
};

Written WriteJournal(const std::string& name, const Plan& plan, size_t records, size_t pad = 0) {
  Written out;
  out.path = TmpPath(name);
  v1::JournalHeader h;
  h.set_run_id("stream");
  h.set_plan_fingerprint(plan.fingerprint);
  h.set_tests(records);
  JournalWriter::Options o;
  o.group_window = std::chrono::microseconds(0);  // one write a record: its end is known
  auto w = JournalWriter::Create(out.path, h, DescribePlan(plan), o);
  EXPECT_TRUE(w.ok()) << w.status();
  out.head = std::filesystem::file_size(out.path);
  v1::PairResult r;
  FillIdentity(PairTestSpec{&plan, schedule::Test{0, 1, 0, false}, 0}, &r);
  r.set_status(v1::RESULT_STATUS_OK);
  for (size_t i = 0; i < records; ++i) {
    r.set_round(static_cast<uint32_t>(i));
    r.set_reason("record " + std::to_string(i) + std::string(pad, '.'));
    EXPECT_TRUE((*w)->Append(r, 0, 1).ok());
    out.ends.push_back(std::filesystem::file_size(out.path));
  }
  return out;
}

TEST(JournalStream, EveryRecordOnceAcrossWindowsOfTheFile) {
  FakeCluster c(3, 1, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  // Well past the reader's 4 MiB window: records straddle its edges.
  const size_t n = 100000;
  Written j = WriteJournal("journal_stream_big", *plan, n, 100);
  ASSERT_GT(j.ends.back(), uint64_t{3} * (4 << 20));
  size_t seen = 0;
  bool started = false;
  JournalVisitor v;
  v.on_start = [&](const JournalSummary& s) {
    EXPECT_EQ(s.header.run_id(), "stream");
    EXPECT_EQ(s.plan.nodes_size(), 3);
    started = true;
    return absl::OkStatus();
  };
  v.on_test = [&](const v1::PairResult& p, uint32_t src, uint32_t dst) {
    EXPECT_TRUE(started);
    EXPECT_EQ(src, 0u);
    EXPECT_EQ(dst, 1u);
    EXPECT_EQ(p.src().node(), "node0");
    EXPECT_EQ(p.dst().node(), "node1");
    // Records of one thread come back in their order.
    EXPECT_EQ(p.round(), seen);
    EXPECT_EQ(p.reason(), "record " + std::to_string(seen) + std::string(100, '.'));
    ++seen;
    return absl::OkStatus();
  };
  auto s = StreamJournal(j.path, v);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(seen, n);
  EXPECT_EQ(s->tests, n);
  EXPECT_EQ(s->format, 2u);
  EXPECT_FALSE(s->torn_tail);
  EXPECT_EQ(s->valid_bytes, j.ends.back());
  std::filesystem::remove(j.path);
}

// A controller killed mid-write leaves any prefix of its last record: each
// is recovered as the records before it, and the summary says how many bytes
// were dropped.
TEST(JournalStream, ATailCutAtAnyByteKeepsTheRecordsBeforeItAndSaysWhatWasDropped) {
  FakeCluster c(3, 1, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  Written j = WriteJournal("journal_stream_cut", *plan, 4);
  const std::string data = Slurp(j.path);
  for (uint64_t cut = j.ends[2] + 1; cut < j.ends[3]; ++cut) {
    Spit(j.path, data.substr(0, cut));
    size_t seen = 0;
    JournalVisitor v;
    v.on_test = [&](const v1::PairResult&, uint32_t, uint32_t) {
      ++seen;
      return absl::OkStatus();
    };
    auto s = StreamJournal(j.path, v);
    ASSERT_TRUE(s.ok()) << "cut at " << cut << ": " << s.status();
    EXPECT_EQ(seen, 3u) << "cut at " << cut;
    EXPECT_TRUE(s->torn_tail) << "cut at " << cut;
    EXPECT_EQ(s->valid_bytes, j.ends[2]);
    EXPECT_EQ(s->dropped_bytes, cut - j.ends[2]);
  }
  // Cut inside the plan: nothing to resume from, said so.
  Spit(j.path, data.substr(0, j.head - 3));
  auto s = StreamJournal(j.path, {});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status().message(), HasSubstr("no header and plan"));
  std::filesystem::remove(j.path);
}

TEST(JournalStream, DamageBeforeTheLastRecordIsAnErrorNamingItsOffset) {
  FakeCluster c(3, 1, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  Written j = WriteJournal("journal_stream_damage", *plan, 5);
  const std::string data = Slurp(j.path);
  // A flipped byte in the body of record 2 (its checksum fails).
  std::string bad = data;
  bad[j.ends[1] + 12] = static_cast<char>(bad[j.ends[1] + 12] ^ 0x5a);
  Spit(j.path, bad);
  size_t seen = 0;
  JournalVisitor v;
  v.on_test = [&](const v1::PairResult&, uint32_t, uint32_t) {
    ++seen;
    return absl::OkStatus();
  };
  auto s = StreamJournal(j.path, v);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status().message(), HasSubstr("record at byte " + std::to_string(j.ends[1])));
  EXPECT_THAT(s.status().message(), HasSubstr("bad checksum"));
  EXPECT_EQ(seen, 2u);  // handed over before the damage was met; the caller gets the error
  // A garbled length (past the 64 MiB a writer allows) is damage even in the
  // last record: a cut write cannot make one.
  for (uint64_t at : {j.ends[1], j.ends[3]}) {
    bad = data;
    bad[at + 3] = '\x7f';
    Spit(j.path, bad);
    s = StreamJournal(j.path, {});
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << at;
    EXPECT_THAT(s.status().message(), HasSubstr("record at byte " + std::to_string(at)));
    EXPECT_THAT(s.status().message(), HasSubstr("the file is damaged here"));
  }
  // A bad checksum in the very last record is what a machine crash leaves
  // (zeros where the data was not yet written): a torn tail, stated.
  bad = data;
  std::fill(bad.begin() + static_cast<long>(j.ends[3]) + 8, bad.end(), '\0');
  Spit(j.path, bad);
  s = StreamJournal(j.path, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->torn_tail);
  EXPECT_EQ(s->tests, 4u);
  EXPECT_EQ(s->dropped_bytes, j.ends[4] - j.ends[3]);
  std::filesystem::remove(j.path);
}

TEST(JournalStream, AVisitorsErrorStopsTheReadAndIsReturnedAsItIs) {
  FakeCluster c(3, 1, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  Written j = WriteJournal("journal_stream_visitor", *plan, 3);
  for (size_t stop_at : {size_t{1}, size_t{3}}) {  // the last record too: not taken for a torn tail
    size_t seen = 0;
    JournalVisitor v;
    v.on_test = [&](const v1::PairResult&, uint32_t, uint32_t) {
      return ++seen == stop_at ? absl::DataLossError("the caller's own") : absl::OkStatus();
    };
    auto s = StreamJournal(j.path, v);
    EXPECT_EQ(s.status(), absl::DataLossError("the caller's own"));
    EXPECT_EQ(seen, stop_at);
  }
  JournalVisitor v;
  v.on_start = [](const JournalSummary&) { return absl::InvalidArgumentError("another plan"); };
  v.on_test = [](const v1::PairResult&, uint32_t, uint32_t) {
    ADD_FAILURE() << "a test after on_start failed";
    return absl::OkStatus();
  };
  EXPECT_EQ(StreamJournal(j.path, v).status(), absl::InvalidArgumentError("another plan"));
  EXPECT_EQ(StreamJournal(TmpPath("journal_stream_none"), {}).status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove(j.path);
}

TEST(DoneTests, KeysTellEveryFieldApartAndRefuseWhatThePlanLacks) {
  DoneTests d(1024, 8);
  ASSERT_TRUE(d.Add(3, 1, 2, 0, 0).ok());
  ASSERT_TRUE(d.Add(3, 2, 1, 0, 0).ok());
  ASSERT_TRUE(d.Add(4, 1, 2, 7, 5).ok());
  ASSERT_TRUE(d.Add(3, 1, 2, 0, 0).ok());  // twice: once
  EXPECT_FALSE(d.Contains(3, 1, 2, 0, 0));  // not sealed yet
  d.Seal();
  EXPECT_EQ(d.size(), 3u);
  EXPECT_TRUE(d.Contains(3, 1, 2, 0, 0));
  EXPECT_TRUE(d.Contains(3, 2, 1, 0, 0));
  EXPECT_TRUE(d.Contains(4, 1, 2, 7, 5));
  for (auto [round, src, dst, rail, dst_rail] : std::vector<std::array<uint32_t, 5>>{
           {2, 1, 2, 0, 0}, {3, 1, 3, 0, 0}, {3, 0, 2, 0, 0}, {3, 1, 2, 1, 1}, {4, 1, 2, 7, 7}, {4, 1, 2, 5, 7}}) {
    EXPECT_FALSE(d.Contains(round, src, dst, rail, dst_rail)) << round << " " << src << " " << dst;
  }
  EXPECT_EQ(d.Add(0, 1024, 0, 0, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(d.Add(0, 0, 1, 8, 0).code(), absl::StatusCode::kOutOfRange);
  // 100,000 nodes x 64 rails leaves room for rounds up to 2^64 / (1e10 * 4096).
  DoneTests big(100000, 64);
  EXPECT_TRUE(big.Add(400000, 99999, 99999, 63, 63).ok());
  EXPECT_EQ(big.Add(1u << 31, 0, 0, 0, 0).code(), absl::StatusCode::kOutOfRange);
}

TEST(DoneTests, TheRunnerRefusesUnsealedKeysAndSkipsSealedOnes) {
  FakeCluster c(4, 1, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  const auto first = plan->schedule.Round(0);
  DoneTests done(4, 1);
  for (const auto& t : first) ASSERT_TRUE(done.Add(0, t.src, t.dst, t.rail, t.TargetRail()).ok());
  AgentPairTester tester(c.agents(), {});
  size_t ran = 0;
  RunnerOptions ro;
  ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
    EXPECT_NE(r.round(), 0u);
    ++ran;
    return absl::OkStatus();
  };
  EXPECT_EQ(SweepRunner(*plan, tester, ro).Run(done).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ran, 0u);
  done.Seal();
  ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run(done).ok());
  EXPECT_EQ(ran, plan->schedule.tests() - first.size());
}

}  // namespace
}  // namespace gdrbench::controller::run
