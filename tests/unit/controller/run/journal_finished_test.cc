// A resume's light read of a journal (JournalVisitor::on_measured without
// on_test: each record decoded from its wire bytes, no PairResult built)
// against the whole read: every field the matrices and the finished tests'
// keys take comes back the same for records of every shape, and the light
// read counts, recovers and refuses as the whole one does (a torn tail, a
// malformed record in the middle, a record outside the plan).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/run/journal.h"
#include "controller/run/journal_records.h"
#include "controller/run/pair_tester.h"
#include "controller/run/probe.h"
#include "controller/run/testing/fake_cluster.h"

namespace gdrbench::controller::run {
namespace {

using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
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

absl::StatusOr<Plan> PlanOf(FakeCluster& c) {
  v1::SweepParams p;
  p.add_sizes_bytes(1 << 20);
  return c.PlanFor(p);
}

v1::SizeResult Size(uint64_t bytes, double gbps) {
  v1::SizeResult z;
  z.set_size_bytes(bytes);
  z.set_bw_avg_gbps(gbps);
  z.set_bw_peak_gbps(gbps + 1);
  z.set_iterations(1000);
  z.set_perftest_command("ib_write_bw -s " + std::to_string(bytes));
  z.mutable_latency()->set_t_avg_us(2.5);
  return z;
}

// Records of every shape the matrices read differently: OK with two sizes
// and a summary, bidirectional, failed with and without a reason, cross-rail
// (rail 1 -> 0: a present zero), a rate of its own, another round.
std::vector<std::pair<schedule::Test, v1::PairResult>> Shapes(const Plan& plan) {
  std::vector<std::pair<schedule::Test, v1::PairResult>> out;
  auto add = [&](schedule::Test t, uint32_t round, auto&& fill) {
    v1::PairResult r;
    FillIdentity(PairTestSpec{&plan, t, round}, &r);
    r.set_status(v1::RESULT_STATUS_OK);
    fill(r);
    out.emplace_back(t, std::move(r));
  };
  add({0, 1, 0}, 0, [](v1::PairResult& r) {
    *r.add_sizes() = Size(65536, 91.5);
    *r.add_sizes() = Size(1 << 20, 97.25);
    r.mutable_summary()->set_device("mlx5_0");
    r.mutable_summary()->set_gid("fe80::1");
    r.mutable_summary()->set_memory_kind("host");
    r.mutable_started_at()->set_seconds(1764900000);
    r.set_duration_ns(123456789);
  });
  add({1, 2, 1, true}, 1, [](v1::PairResult& r) {
    *r.add_sizes() = Size(1 << 20, 88);
    *r.add_reverse_sizes() = Size(1 << 20, 86.5);
  });
  add({2, 0, 0}, 2, [](v1::PairResult& r) {
    r.set_status(v1::RESULT_STATUS_FAILED);
    r.set_reason("RDMA_CM_EVENT_UNREACHABLE: node0 mlx5_0");
  });
  add({2, 1, 1}, 2, [](v1::PairResult& r) { r.set_status(v1::RESULT_STATUS_ERROR); });
  add({1, 0, 1, false, 0}, 3, [](v1::PairResult& r) { *r.add_sizes() = Size(1 << 20, 50); });
  add({0, 2, 1}, 40000, [](v1::PairResult& r) {
    *r.add_sizes() = Size(1 << 20, 12.5);
    r.set_expected_gbps(0);  // not the plan's: written, read back as 0
  });
  return out;
}

std::string WriteShapes(const std::string& name, const Plan& plan) {
  const std::string path = TmpPath(name);
  v1::JournalHeader h;
  h.set_plan_fingerprint(plan.fingerprint);
  auto w = JournalWriter::Create(path, h, DescribePlan(plan), {false, std::chrono::microseconds(0)});
  EXPECT_TRUE(w.ok()) << w.status();
  for (const auto& [t, r] : Shapes(plan)) EXPECT_TRUE((*w)->Append(r, t.src, t.dst).ok());
  return path;
}

void ExpectSame(const FinishedTest& got, const FinishedTest& want, size_t i) {
  EXPECT_EQ(got.src, want.src) << i;
  EXPECT_EQ(got.dst, want.dst) << i;
  EXPECT_EQ(got.round, want.round) << i;
  const analysis::MeasuredTest &g = got.measured, &w = want.measured;
  EXPECT_EQ(g.rail, w.rail) << i;
  EXPECT_EQ(g.dst_rail, w.dst_rail) << i;
  EXPECT_EQ(g.status, w.status) << i;
  EXPECT_EQ(g.reason, w.reason) << i;
  EXPECT_EQ(g.expected_gbps, w.expected_gbps) << i;
  auto same = [i](const std::vector<analysis::MeasuredTest::Rate>& a,
                  const std::vector<analysis::MeasuredTest::Rate>& b) {
    ASSERT_EQ(a.size(), b.size()) << i;
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].size_bytes, b[k].size_bytes) << i;
      EXPECT_EQ(a[k].bw_avg_gbps, b[k].bw_avg_gbps) << i;
    }
  };
  same(g.sizes, w.sizes);
  same(g.reverse_sizes, w.reverse_sizes);
}

// What each read hands over, copied (the views are the reader's).
struct Seen {
  std::vector<FinishedTest> tests;
  std::vector<std::string> reasons;
};

absl::StatusOr<JournalSummary> Read(const std::string& path, bool whole, Seen* seen) {
  JournalVisitor v;
  if (whole) v.on_test = [](const v1::PairResult&, uint32_t, uint32_t) { return absl::OkStatus(); };
  v.on_measured = [seen](const FinishedTest& t) {
    seen->tests.push_back(t);
    seen->reasons.emplace_back(t.measured.reason);
    return absl::OkStatus();
  };
  auto s = StreamJournal(path, v);
  for (size_t i = 0; i < seen->tests.size(); ++i) seen->tests[i].measured.reason = seen->reasons[i];
  return s;
}

TEST(JournalFinished, EveryRecordDecodesToWhatTheWholeResultGives) {
  FakeCluster c(3, 2, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = WriteShapes("journal_finished_shapes", *plan);
  Seen light, whole;
  auto a = Read(path, false, &light);
  auto b = Read(path, true, &whole);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  const auto shapes = Shapes(*plan);
  ASSERT_EQ(light.tests.size(), shapes.size());
  ASSERT_EQ(whole.tests.size(), shapes.size());
  EXPECT_EQ(a->tests, shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) ExpectSame(light.tests[i], whole.tests[i], i);
  // And what the records were written from, in a few fields the test fixes.
  EXPECT_EQ(light.tests[1].measured.reverse_sizes.at(0).bw_avg_gbps, 86.5);
  EXPECT_EQ(light.tests[2].measured.reason, "RDMA_CM_EVENT_UNREACHABLE: node0 mlx5_0");
  EXPECT_EQ(light.tests[3].measured.status, v1::RESULT_STATUS_ERROR);
  EXPECT_EQ(light.tests[4].measured.rail, 1u);
  EXPECT_EQ(light.tests[4].measured.dst_rail, 0u);
  EXPECT_EQ(light.tests[5].round, 40000u);
  EXPECT_EQ(light.tests[5].measured.expected_gbps, 0.0);
  EXPECT_GT(light.tests[0].measured.expected_gbps, 0.0);  // the plan's, rebuilt
  EXPECT_EQ(light.tests[0].measured.sizes.at(1).size_bytes, uint64_t{1} << 20);
  std::filesystem::remove(path);
}

// A frame around `body` (its kind byte first), as the writer frames one.
std::string Frame(const std::string& body) {
  std::string out(8, '\0');
  const uint32_t len = static_cast<uint32_t>(body.size());
  const uint32_t sum = journal_records::FrameChecksum(body.data(), body.size());
  for (int i = 0; i < 4; ++i) {
    out[i] = static_cast<char>((len >> (8 * i)) & 0xff);
    out[4 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  }
  return out + body;
}

TEST(JournalFinished, ALightReadCountsRecoversAndRefusesAsTheWholeOne) {
  FakeCluster c(3, 2, 100);
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  const std::string path = WriteShapes("journal_finished_faults", *plan);
  const std::string data = Slurp(path);
  for (bool whole : {false, true}) {
    // A tail cut inside the last record: the records before it, the cut said.
    for (size_t cut : {size_t{1}, size_t{9}, size_t{20}}) {
      Spit(path, data.substr(0, data.size() - cut));
      Seen seen;
      auto s = Read(path, whole, &seen);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_EQ(seen.tests.size(), 5u) << whole << " " << cut;
      EXPECT_EQ(s->tests, 5u);
      EXPECT_TRUE(s->torn_tail);
    }
    // A well-framed record whose bytes are not a message (a length past its
    // end), then a whole record: DATA_LOSS naming its offset.
    const std::string bad = Frame(std::string("T") + "\x32\x7f" + "ab");
    Spit(path, data + bad + data.substr(data.size() - 40));
    Seen seen;
    auto s = Read(path, whole, &seen);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << whole;
    EXPECT_THAT(s.status().message(), HasSubstr("record at byte " + std::to_string(data.size())));
    EXPECT_THAT(s.status().message(), HasSubstr("bad test record"));
    // ... and as the last record, a torn tail.
    Spit(path, data + bad);
    s = Read(path, whole, &seen);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->torn_tail);
    EXPECT_EQ(s->tests, 6u);
    // A record of a node the plan lacks, in the same words either way.
    v1::JournalTest outside;
    outside.set_src(7);
    outside.set_dst(1);
    Spit(path, data + Frame("T" + outside.SerializeAsString()) + bad);
    s = Read(path, whole, &seen);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << whole;
    EXPECT_THAT(s.status().message(),
                HasSubstr("a record names node 7 -> 1 rail 0, outside the journal's plan of 3 nodes"));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gdrbench::controller::run
