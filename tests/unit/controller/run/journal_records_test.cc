// The sweep journal's records: compact, and read back as the whole results
// the runner produced, every field of the hand-written messages included,
// cross-rail results with the target's rail.
#include "controller/run/journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <unordered_set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/message_differencer.h>

#include "controller/run/pair_tester.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"
#include "tests/unit/controller/run/journal_testing.h"

namespace gdrbench::controller::run {
namespace {

using journal_testing::FullResult;
using journal_testing::Header;
using journal_testing::PlanFor;
using journal_testing::TmpPath;
using ::testing::HasSubstr;

TEST(Journal, RecordsReadBackAsTheWholeResults) {
  FakeCluster c(4, 2, 400);
  auto plan = PlanFor(c, "gpu");
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<v1::PairResult> written;
  written.push_back(FullResult(*plan, 1, 2, 1, 7));
  written.push_back(FullResult(*plan, 0, 3, 0, 0));
  written.back().set_expected_gbps(123.5);                // not the plan's rate: recorded
  written.back().mutable_src()->set_memory_kind("host");  // not the summary's: recorded
  v1::PairResult bare;                                    // an ERROR before any RPC answered: identity only
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
        << "record " << i << ":\n"
        << j->pairs[i].DebugString() << "\nwas written as\n"
        << written[i].DebugString();
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
          f->is_repeated() ? r->AddUInt64(m, f, (uint64_t{1} << 40) + v + k)
                           : r->SetUInt64(m, f, (uint64_t{1} << 40) + v);
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
            SetEveryField(f->is_repeated() ? r->AddMessage(m, f) : r->MutableMessage(m, f), seed + k + 1,
                          depth - 1);
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
        << "record " << i << ":\n"
        << j->pairs[i].DebugString() << "\nwas written as\n"
        << written[i].DebugString();
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
  EXPECT_LT(format2_bytes * 5, format1_bytes * 3)
      << format2_bytes / n << " vs " << format1_bytes / n << " B/record";
  auto j = ReadJournal(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->pairs.size(), 12u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gdrbench::controller::run
