// The sweep journal: compact records that read back as the whole results the
// runner produced, resume after a kill, group commit, torn and corrupt
// files, and the previous release's format-1 journal (tests/testdata/journal).
#include "controller/run/journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <unordered_set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/message_differencer.h>

#include "controller/run/pair_tester.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Plan> PlanFor(FakeCluster& c, const std::string& memory = "host",
                             schedule::Mode mode = schedule::Mode::kAllPairs) {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.add_sizes_bytes(1 << 20);
  p.set_iterations(100);
  p.set_qps(1);
  schedule::ScheduleOptions o;
  o.mode = mode;
  return c.PlanFor(p, memory, o);
}

// The finished tests of `pairs` as a resume gives them to the runner.
DoneTests DoneOf(const Plan& plan, const std::vector<v1::PairResult>& pairs) {
  auto index = [&](const std::string& name) {
    for (uint32_t i = 0; i < plan.nodes.size(); ++i) {
      if (plan.nodes[i].name == name) return i;
    }
    ADD_FAILURE() << "no node " << name;
    return 0u;
  };
  uint32_t rails = 1;
  for (const auto& n : plan.nodes) rails = std::max(rails, static_cast<uint32_t>(n.rails.size()));
  DoneTests done(static_cast<uint32_t>(plan.nodes.size()), rails);
  for (const auto& p : pairs) {
    EXPECT_TRUE(done.Add(p.round(), index(p.src().node()), index(p.dst().node()), p.rail(),
                         p.has_dst_rail() ? p.dst_rail() : p.rail())
                    .ok());
  }
  done.Seal();
  return done;
}

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

v1::JournalHeader Header(const Plan& plan, const std::string& id) {
  v1::JournalHeader h;
  h.set_run_id(id);
  h.set_plan_fingerprint(plan.fingerprint);
  h.set_tests(plan.schedule.tests());
  return h;
}

// A result as the runner makes it (FillIdentity), every measured field set.
v1::PairResult FullResult(const Plan& plan, uint32_t src, uint32_t dst, uint32_t rail, uint32_t round,
                          uint32_t dst_rail = schedule::Test::kSameRail) {
  v1::PairResult r;
  FillIdentity(PairTestSpec{&plan, schedule::Test{src, dst, rail, false, dst_rail}, round}, &r);
  r.set_status(v1::RESULT_STATUS_FAILED);
  r.set_reason("node1->node2: 1048576 B: completion error: IBV_WC_RETRY_EXC_ERR");
  for (uint64_t size : {65536ull, 1048576ull}) {
    v1::SizeResult* s = r.add_sizes();
    s->set_size_bytes(size);
    s->set_iterations(100);
    s->set_bw_avg_gbps(371.25);
    s->set_bw_peak_gbps(389.5);
    s->set_msg_rate_mpps(0.75);
    s->set_duration_ns(123456);
    s->set_status(v1::RESULT_STATUS_OK);
    s->set_verified(true);
    s->set_perftest_command("ib_write_bw -d nic0 -s 65536 -n 100 10.0.0.2");
    *r.add_reverse_sizes() = *s;
  }
  r.mutable_summary()->set_status(v1::RESULT_STATUS_FAILED);
  r.mutable_summary()->set_device("nic0");
  r.mutable_summary()->set_memory_kind("gpu");
  r.mutable_summary()->set_registration("ibv_reg_dmabuf_mr");
  r.mutable_summary()->set_gid("fe80::1");
  r.mutable_src()->set_memory_kind("gpu");
  r.mutable_src()->set_registration("ibv_reg_dmabuf_mr");
  r.mutable_dst()->set_memory_kind("gpu");
  r.mutable_dst()->set_registration("peermem");  // the target registered differently
  r.set_attempts(2);
  r.mutable_started_at()->set_seconds(1796127340);
  r.mutable_started_at()->set_nanos(772716738);
  r.set_duration_ns(-1);  // odd but representable: it must survive as written
  // The ports' counters (link flags): a run.json written from the journal
  // carries them (controller/sweep/streamed_run.h).
  r.mutable_src_counters()->set_device("nic0");
  r.mutable_src_counters()->set_packets(28000);
  v1::CounterChange* c = r.mutable_dst_counters()->add_changes();
  c->set_name("hw_counters/rcvd_seq_err");
  c->set_kind(v1::COUNTER_KIND_RETRANSMIT);
  c->set_delta(812);
  return r;
}

TEST(Journal, RecordsReadBackAsTheWholeResults) {
  FakeCluster c(4, 2, 400);
  auto plan = PlanFor(c, "gpu");
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<v1::PairResult> written;
  written.push_back(FullResult(*plan, 1, 2, 1, 7));
  written.push_back(FullResult(*plan, 0, 3, 0, 0));
  written.back().set_expected_gbps(123.5);  // not the plan's rate: recorded
  written.back().mutable_src()->set_memory_kind("host");  // not the summary's: recorded
  v1::PairResult bare;  // an ERROR before any RPC answered: identity only
  FillIdentity(PairTestSpec{&*plan, schedule::Test{3, 0, 1, false}, 2}, &bare);
  bare.set_status(v1::RESULT_STATUS_ERROR);
  written.push_back(bare);
  const std::string path = TmpPath("journal_roundtrip");
  {
    auto w = JournalWriter::Create(path, Header(*plan, "rt"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok()) << w.status();
    for (const auto& r : written) ASSERT_TRUE((*w)->Append(r).ok());
  }
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->format, 2u);
  EXPECT_EQ(j->header.run_id(), "rt");
  ASSERT_EQ(j->pairs.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(j->pairs[i].SerializeAsString(), written[i].SerializeAsString())
        << "record " << i << ":\n" << j->pairs[i].DebugString() << "\nwas written as\n" << written[i].DebugString();
  }
  EXPECT_EQ(j->pairs[0].src().memory(), "gpu:1");  // rebuilt from the plan
  EXPECT_EQ(j->pairs[0].dst().agent_address(), "fake2:1");
  std::filesystem::remove(path);
}

// Sets every field of `m` (and of its sub-messages, to `depth`) to a value
// unlike proto3's default, through its descriptor: what a field added to the
// proto later gets too. Negative values for the signed kinds (a negative
// int32 is a 10-byte varint).
void SetEveryField(google::protobuf::Message* m, int seed, int depth = 3) {
  using google::protobuf::FieldDescriptor;
  const auto* d = m->GetDescriptor();
  const auto* r = m->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const int v = seed * 100 + f->number();
    const int copies = f->is_repeated() ? 2 : 1;
    for (int k = 0; k < copies; ++k) {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
          f->is_repeated() ? r->AddInt32(m, f, -v - k) : r->SetInt32(m, f, -v);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          f->is_repeated() ? r->AddInt64(m, f, -v * 1000003LL - k) : r->SetInt64(m, f, -v * 1000003LL);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          f->is_repeated() ? r->AddUInt32(m, f, v + k) : r->SetUInt32(m, f, v);
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          f->is_repeated() ? r->AddUInt64(m, f, (uint64_t{1} << 40) + v + k) : r->SetUInt64(m, f, (uint64_t{1} << 40) + v);
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          f->is_repeated() ? r->AddDouble(m, f, v + 0.25 + k) : r->SetDouble(m, f, -(v + 0.25));
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          f->is_repeated() ? r->AddFloat(m, f, v + 0.5f + k) : r->SetFloat(m, f, v + 0.5f);
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          f->is_repeated() ? r->AddBool(m, f, true) : r->SetBool(m, f, true);
          break;
        case FieldDescriptor::CPPTYPE_ENUM: {
          const auto* e = f->enum_type();
          const int n = e->value(e->value_count() - 1)->number();
          f->is_repeated() ? r->AddEnumValue(m, f, n) : r->SetEnumValue(m, f, n);
          break;
        }
        case FieldDescriptor::CPPTYPE_STRING: {
          const std::string text = absl::StrCat(f->name(), "-", v, k ? "-b" : "", "-\xc3\xa9");
          f->is_repeated() ? r->AddString(m, f, text) : r->SetString(m, f, text);
          break;
        }
        case FieldDescriptor::CPPTYPE_MESSAGE:
          if (depth > 0) {
            SetEveryField(f->is_repeated() ? r->AddMessage(m, f) : r->MutableMessage(m, f), seed + k + 1, depth - 1);
          }
          break;
      }
    }
  }
}

// The journal writes SizeResult, SweepSummary and Timestamp field by field
// (journal_records.cc): every field of theirs, whatever its kind or sign,
// reads back as written. A field added to the proto fails this until the
// journal writes it.
TEST(Journal, EveryFieldOfTheHandWrittenMessagesReadsBack) {
  FakeCluster c(4, 2, 400);
  auto plan = PlanFor(c, "gpu");
  ASSERT_TRUE(plan.ok()) << plan.status();
  v1::PairResult r = FullResult(*plan, 1, 2, 1, 7);
  r.set_verify_seed(0xfedcba9876543210ull);  // every bit of the test's verify seed
  SetEveryField(r.mutable_sizes(0), 1);
  SetEveryField(r.mutable_reverse_sizes(1), 2);
  SetEveryField(r.mutable_summary(), 3);
  SetEveryField(r.mutable_started_at(), 4, 0);
  r.mutable_started_at()->set_nanos(999999999);
  // The fields the record derives from the plan or dedups stay the plan's.
  r.mutable_summary()->set_memory_kind(r.src().memory_kind());
  r.mutable_summary()->set_registration(r.src().registration());
  // Zeros and empties in between (absent in proto3's encoding).
  r.mutable_sizes(1)->Clear();
  r.mutable_sizes(1)->set_bw_avg_gbps(-0.0);  // -0.0 is not 0 in the encoding
  const std::string path = TmpPath("journal_every_field");
  {
    auto w = JournalWriter::Create(path, Header(*plan, "every"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Append(r).ok());
  }
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ(j->pairs.size(), 1u);
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(r, j->pairs[0])) << diff;
  EXPECT_TRUE(std::signbit(j->pairs[0].sizes(1).bw_avg_gbps()));
  std::filesystem::remove(path);
}

// Cross-rail results keep the target's rail: its NIC and memory come back
// from the plan's rail of the target, and a target rail 0 stays present.
TEST(Journal, CrossRailRecordsReadBackWithTheTargetsRail) {
  FakeCluster c(4, 3, 400);
  auto plan = PlanFor(c, "gpu", schedule::Mode::kCrossRail);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<v1::PairResult> written = {FullResult(*plan, 1, 2, 1, 3, /*dst_rail=*/0),
                                         FullResult(*plan, 0, 3, 0, 4, /*dst_rail=*/2),
                                         FullResult(*plan, 2, 0, 2, 5)};  // same rail: no dst_rail
  const std::string path = TmpPath("journal_crossrail");
  {
    auto w = JournalWriter::Create(path, Header(*plan, "xr"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok()) << w.status();
    for (const auto& r : written) ASSERT_TRUE((*w)->Append(r).ok());
  }
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ(j->pairs.size(), 3u);
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(j->pairs[i].SerializeAsString(), written[i].SerializeAsString())
        << "record " << i << ":\n" << j->pairs[i].DebugString() << "\nwas written as\n" << written[i].DebugString();
  }
  const v1::PairResult& a = j->pairs[0];
  ASSERT_TRUE(a.has_dst_rail());
  EXPECT_EQ(a.dst_rail(), 0u);
  EXPECT_EQ(a.src().nic_device(), "nic1");
  EXPECT_EQ(a.dst().nic_device(), "nic0");
  EXPECT_EQ(a.src().memory(), "gpu:1");
  EXPECT_EQ(a.dst().memory(), "gpu:0");
  EXPECT_EQ(j->pairs[1].dst().nic_device(), "nic2");
  EXPECT_FALSE(j->pairs[2].has_dst_rail());
  // The resume keys tell a test from the same (src, dst, rail) on another target rail.
  EXPECT_NE(TestKey(a), TestKey(3, "node1", "node2", 1, 1));
  EXPECT_EQ(TestKey(a), TestKey(3, "node1", "node2", 1, 0));
  // A target rail the plan's node lacks is refused, not rewritten.
  v1::PairResult bad = written[0];
  bad.set_dst_rail(7);
  auto w = JournalWriter::Create(path, Header(*plan, "xr2"), DescribePlan(*plan));
  ASSERT_TRUE(w.ok());
  absl::Status st = (*w)->Append(bad);
  if (st.ok()) st = (*w)->Flush();
  EXPECT_THAT(std::string(st.message()), HasSubstr("rail 1->7 does not carry the plan's endpoints"));
  std::filesystem::remove(path);
}

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

TEST(Journal, ARecordIsUnder60PercentOfTheWholeResult) {
  FakeCluster c(4, 1, 400);
  auto plan = PlanFor(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = TmpPath("journal_size");
  uint64_t format1_bytes = 0;
  size_t n = 0;
  uint64_t start = 0;
  {
    auto w = JournalWriter::Create(path, Header(*plan, "size"), DescribePlan(*plan));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Flush().ok());
    start = std::filesystem::file_size(path);
    AgentPairTester tester(c.agents(), {});
    RunnerOptions ro;
    ro.on_result = [&](const v1::PairResult& r, const schedule::Test&) {
      v1::JournalRecord rec;  // what format 1 wrote per test: 8 bytes of frame and this
      *rec.mutable_pair() = r;
      format1_bytes += 8 + rec.ByteSizeLong();
      ++n;
      return (*w)->Append(r);
    };
    ASSERT_TRUE(SweepRunner(*plan, tester, ro).Run().ok());
  }
  const uint64_t format2_bytes = std::filesystem::file_size(path) - start;
  EXPECT_EQ(n, 12u);
  // The fake's results: 106 B against 186 B per test (two sizes, a summary).
  EXPECT_LT(format2_bytes * 5, format1_bytes * 3) << format2_bytes / n << " vs " << format1_bytes / n << " B/record";
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->pairs.size(), 12u);
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
