// A sweep held as a StreamedRun (its header, compact matrices and journal)
// renders the run.json bytes and the upload chunks of the whole v1::Run that
// RunSweep builds in memory: same fleet, same plan, same results.
#include "controller/sweep/streamed_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "controller/report/report.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "report/run_chunks.h"

namespace gdrbench::controller::sweep {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

// A small fleet with a low link (retested, still low: a reason and a
// "retested" mark in the matrices) and a node whose rail 1 is slow.
SweepConfig Config(run::FakeCluster& cluster, const std::string& journal) {
  cluster.SetBandwidth([](uint32_t s, uint32_t d, const std::string& nic) {
    if (s == 1 && d == 2) return 30.0;
    if (d == 3 && nic == "nic1") return 60.0;
    return 95.0 + (s * 7 + d * 3) % 4;
  });
  SweepConfig c;
  c.inventory.source = "test";
  c.inventory.nodes = cluster.InventoryNodes();
  c.agents = cluster.agents();
  c.parallel = 1;  // the journal's order is then the order the runner handed the results over
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);
  c.params.set_seed(42);
  c.run_id = "streamed-run-test";
  c.journal_path = journal;
  return c;
}

// Times differ between two sweeps of the same plan: every Timestamp and
// every test's duration_ns (the controller's wall clock around it) cleared,
// so what is compared is what the sweep measured and decided.
void ClearTimes(Message* m) {
  if (m->GetDescriptor()->full_name() == google::protobuf::Timestamp::descriptor()->full_name()) {
    m->Clear();
    return;
  }
  std::vector<const FieldDescriptor*> fields;
  m->GetReflection()->ListFields(*m, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->name() == "duration_ns") m->GetReflection()->ClearField(m, f);
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < m->GetReflection()->FieldSize(*m, f); ++i) {
        ClearTimes(m->GetReflection()->MutableRepeatedMessage(m, f, i));
      }
    } else {
      ClearTimes(m->GetReflection()->MutableMessage(m, f));
    }
  }
}

// Removes the streamed run's journal when a test ends (each test reads it
// until then).
struct RemoveJournal {
  ~RemoveJournal() { std::filesystem::remove(TmpPath("streamed.journal")); }
};

struct Both {
  v1::Run whole;         // RunSweep's
  StreamedRun streamed;  // RunSweepStreamed's
};

Both RunBoth(bool keep_pairs, bool bidirectional, schedule::Mode mode = schedule::Mode::kAllPairs) {
  Both b;
  {
    run::FakeCluster cluster(5, 2, 100);
    SweepConfig c = Config(cluster, TmpPath("streamed-whole.journal"));
    c.keep_pairs = keep_pairs;
    c.schedule.bidirectional = bidirectional;
    c.schedule.mode = mode;
    auto whole = RunSweep(c);
    EXPECT_TRUE(whole.ok()) << whole.status();
    if (whole.ok()) b.whole = *std::move(whole);
    std::filesystem::remove(c.journal_path);
  }
  run::FakeCluster cluster(5, 2, 100);
  SweepConfig c = Config(cluster, TmpPath("streamed.journal"));
  c.keep_pairs = keep_pairs;
  c.schedule.bidirectional = bidirectional;
  c.schedule.mode = mode;
  auto streamed = RunSweepStreamed(c);
  EXPECT_TRUE(streamed.ok()) << streamed.status();
  if (streamed.ok()) b.streamed = *std::move(streamed);
  return b;
}

std::string Json(const StreamedRun& run) {
  std::ostringstream out;
  absl::Status st = run.WriteJson(out);
  EXPECT_TRUE(st.ok()) << st;
  return out.str();
}

std::string Json(const v1::Run& run) {
  auto json = report::RenderJson(run);
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

class StreamedRunTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(StreamedRunTest, RunJsonHasTheBytesOfTheWholeRunInMemory) {
  RemoveJournal remove;
  const auto [keep_pairs, bidirectional] = GetParam();
  Both b = RunBoth(keep_pairs, bidirectional);
  ASSERT_TRUE(b.streamed.streamed());
  EXPECT_EQ(b.streamed.header().pairs_size(), 0);
  for (const auto& m : b.streamed.header().matrices()) EXPECT_EQ(m.cells_size(), 0);
  // Chunks smaller than the arrays, so the joins between chunks are rendered too.
  b.streamed.set_chunk_sizes({3, 2});

  auto materialized = b.streamed.Materialize();
  ASSERT_TRUE(materialized.ok()) << materialized.status();
  // The streamed writer renders json_util's bytes of the same run ...
  EXPECT_EQ(Json(b.streamed), Json(*materialized));
  EXPECT_EQ(b.streamed.cells(), 40u);
  EXPECT_EQ(materialized->pairs_size(), keep_pairs ? b.whole.pairs_size() : 0);

  // ... and that run is the one RunSweep holds, pairs, cells, reasons and
  // retests included (the times of the two sweeps set equal).
  v1::Run streamed_run = *materialized, whole = b.whole;
  ASSERT_GT(whole.matrices_size(), 0);
  ClearTimes(&streamed_run);
  ClearTimes(&whole);
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(whole, streamed_run)) << diff;
  EXPECT_EQ(Json(whole), Json(streamed_run));
  EXPECT_FALSE(whole.passed());  // the low link is in both
  EXPECT_THAT(Json(streamed_run), ::testing::HasSubstr("\"retested\": true"));
}

INSTANTIATE_TEST_SUITE_P(KeptPairsAndDirections, StreamedRunTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

// Both runs' upload chunks, cut at `sizes`.
struct Chunks {
  std::vector<v1::RunChunk> streamed, whole;
};
Chunks ChunksOf(const Both& b, const gdrbench::report::ChunkSizes& sizes) {
  Chunks out;
  EXPECT_TRUE(b.streamed
                  .ForEachRunChunk(sizes,
                                   [&](const v1::RunChunk& c) {
                                     out.streamed.push_back(c);
                                     return absl::OkStatus();
                                   })
                  .ok());
  EXPECT_TRUE(gdrbench::report::ForEachRunChunk(b.whole, sizes, [&](const v1::RunChunk& c) {
                out.whole.push_back(c);
                return absl::OkStatus();
              }).ok());
  return out;
}

TEST(StreamedRun, UploadChunksAreTheChunksOfTheWholeRun) {
  RemoveJournal remove;
  Both b = RunBoth(true, false);
  const gdrbench::report::ChunkSizes sizes{7, 5};
  auto [streamed, whole] = ChunksOf(b, sizes);
  ASSERT_EQ(streamed.size(), whole.size());
  // Header, 2 matrices of 20 cells in chunks of 7 (3 each), 40 pairs and
  // the retests in chunks of 5.
  EXPECT_TRUE(streamed.front().has_header());
  EXPECT_EQ(streamed[1].cells().cells_size(), 7);
  EXPECT_EQ(streamed[3].cells().cells_size(), 6);
  EXPECT_TRUE(streamed.back().has_pairs());
  for (size_t i = 0; i < streamed.size(); ++i) {
    ClearTimes(&streamed[i]);
    ClearTimes(&whole[i]);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(whole[i], streamed[i])) << "chunk " << i;
  }
}

// --mode cross-rail: each rail's initiators have a matrix per target rail
// at one size; a cell chunk names its matrix's target rail
// (MatrixCells.dst_rail), streamed as whole.
TEST(StreamedRun, CrossRailCellChunksNameTheirTargetRail) {
  RemoveJournal remove;
  Both b = RunBoth(true, false, schedule::Mode::kCrossRail);
  ASSERT_TRUE(b.streamed.streamed());
  auto [streamed, whole] = ChunksOf(b, {64, 64});
  ASSERT_EQ(streamed.size(), whole.size());
  int cross = 0;
  for (size_t i = 0; i < streamed.size(); ++i) {
    ClearTimes(&streamed[i]);
    ClearTimes(&whole[i]);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(whole[i], streamed[i])) << "chunk " << i;
    if (!streamed[i].has_cells()) continue;
    ASSERT_TRUE(streamed[i].cells().has_dst_rail()) << "chunk " << i;
    EXPECT_NE(streamed[i].cells().dst_rail(), streamed[i].cells().rail());
    ++cross;
  }
  EXPECT_EQ(cross, 2);  // rail 0 -> 1 and rail 1 -> 0
}

TEST(StreamedRun, WithoutAJournalTheRunIsKeptWhole) {
  run::FakeCluster cluster(3, 1, 100);
  SweepConfig c = Config(cluster, "");
  auto run = RunSweepStreamed(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->streamed());
  EXPECT_EQ(run->header().pairs_size(), 6 + 1);  // the low cell's retest
  EXPECT_EQ(Json(*run), Json(run->header()));
}

TEST(StreamedRun, AJournalThatVanishedIsAnErrorNotAnEmptyRun) {
  RemoveJournal remove;
  Both b = RunBoth(true, false);
  std::filesystem::remove(TmpPath("streamed.journal"));
  std::ostringstream out;
  EXPECT_EQ(b.streamed.WriteJson(out).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gdrbench::controller::sweep
