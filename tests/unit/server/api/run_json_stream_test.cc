// POST /api/v1/runs streamed (server/api/run_json_stream.h). The oracle is
// protobuf itself: the chunks the stream replays must equal, one for one,
// the chunks report/run_chunks.h cuts from the run that
// google::protobuf::util::JsonStringToMessage parses from the same text. The
// texts are real run.json files from the lab (tests/testdata/runs/README.md
// says how each was made) fed in pieces of every size, and a run grown from
// one of them.
#include "server/api/run_json_stream.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "report/run_chunks.h"

namespace gdrbench::server::api {
namespace {

using ::testing::HasSubstr;

std::string ReadRun(const std::string& name) {
  std::ifstream in(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/runs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<v1::RunChunk> Whole(const std::string& json) {
  v1::Run run;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &run).ok());
  std::vector<v1::RunChunk> out;
  EXPECT_TRUE(report::ForEachRunChunk(run, {}, [&](const v1::RunChunk& c) {
                out.push_back(c);
                return absl::OkStatus();
              }).ok());
  return out;
}

absl::Status Stream(const std::string& json, size_t piece, std::vector<v1::RunChunk>* out,
                    RunJsonStream* s) {
  for (size_t i = 0; i < json.size(); i += piece) {
    if (auto st = s->Feed(std::string_view(json).substr(i, piece)); !st.ok()) return st;
  }
  if (auto st = s->Finish(); !st.ok()) return st;
  return s->Replay([&](const v1::RunChunk& c) {
    out->push_back(c);
    return absl::OkStatus();
  });
}

void ExpectSameChunks(const std::vector<v1::RunChunk>& a, const std::vector<v1::RunChunk>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) << "chunk " << i;
  }
}

TEST(RunJsonStream, RealRunsGiveTheChunksOfTheWholeRunInPiecesOfAnySize) {
  for (const char* name : {"lab-demo-4node.json", "slurm-lab-node4.json"}) {
    const std::string json = ReadRun(name);
    ASSERT_FALSE(json.empty()) << name;
    const auto want = Whole(json);
    for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, json.size()}) {
      RunJsonStream s;
      std::vector<v1::RunChunk> got;
      ASSERT_TRUE(Stream(json, piece, &got, &s).ok()) << name << " in pieces of " << piece;
      ExpectSameChunks(got, want);
    }
  }
}

TEST(RunJsonStream, HoldsOnePairOrMatrixAtATimeNotTheBody) {
  // The demo's run with its pairs repeated 2,000 times (24,000 pairs).
  v1::Run run;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadRun("lab-demo-4node.json"), &run).ok());
  const auto pairs = run.pairs();
  for (int k = 1; k < 2000; ++k) run.mutable_pairs()->Add(pairs.begin(), pairs.end());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(run, &json).ok());
  RunJsonStream s;
  std::vector<v1::RunChunk> got;
  ASSERT_TRUE(Stream(json, 64 << 10, &got, &s).ok());
  EXPECT_EQ(s.pairs(), 24000u);
  ASSERT_EQ(got.size(), 1 + 3 + 24);  // header, one chunk per matrix, 1,024 pairs a chunk
  EXPECT_EQ(got.back().pairs().pairs_size(), 24000 % 1024);
  EXPECT_LT(s.largest_element_bytes() * 1000, json.size())
      << "largest element " << s.largest_element_bytes() << " of a " << json.size() << "-byte body";
}

// Replayed to the ingest's AddSerializedPairs: each pair chunk handed over
// as bytes, which protobuf's parser reads as the very chunk of the whole run.
TEST(RunJsonStream, PairChunksReplayedAsBytesParseToTheWholeRunsChunks) {
  v1::Run run;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadRun("lab-demo-4node.json"), &run).ok());
  const auto pairs = run.pairs();
  for (int k = 1; k < 100; ++k) run.mutable_pairs()->Add(pairs.begin(), pairs.end());  // 1,200 pairs
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(run, &json).ok());
  std::vector<v1::RunChunk> want;
  ASSERT_TRUE(report::ForEachRunChunk(run, {}, [&](const v1::RunChunk& c) {
                if (c.has_pairs()) want.push_back(c);
                return absl::OkStatus();
              }).ok());
  RunJsonStream s;
  ASSERT_TRUE(s.Feed(json).ok());
  ASSERT_TRUE(s.Finish().ok());
  std::vector<v1::RunChunk> got;
  size_t messages = 0;
  ASSERT_TRUE(s.Replay(
                   [&](const v1::RunChunk& c) {
                     EXPECT_FALSE(c.has_pairs()) << "a pair chunk given as a message";
                     ++messages;
                     return absl::OkStatus();
                   },
                   1024,
                   [&](absl::string_view bytes) {
                     v1::RunChunk c;
                     EXPECT_TRUE(
                         c.mutable_pairs()->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
                     got.push_back(c);
                     return absl::OkStatus();
                   })
                  .ok());
  EXPECT_EQ(messages, 1u + run.matrices_size());  // the header and a chunk per matrix
  ExpectSameChunks(got, want);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].pairs().pairs_size(), 1200 - 1024);
}

TEST(RunJsonStream, AFieldItDoesNotKnowIsRefusedAndNamed) {
  std::string json = ReadRun("lab-demo-4node.json");
  const size_t at = json.find("\"pairs\"");
  ASSERT_NE(at, std::string::npos);
  const size_t first = json.find('{', at);
  json.insert(first + 1, "\"frobnicate\": 1, ");
  RunJsonStream s;
  std::vector<v1::RunChunk> got;
  const absl::Status st = Stream(json, 4096, &got, &s);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("pairs[0]"));
  EXPECT_THAT(st.message(), HasSubstr("frobnicate"));
  EXPECT_TRUE(got.empty());

  RunJsonStream top;
  EXPECT_THAT(Stream(R"({"runId": "a", "colour": "red"})", 5, &got, &top).message(), HasSubstr("colour"));
}

TEST(RunJsonStream, WhatIsNotOneRunObjectIsRefused) {
  struct Case {
    std::string body, says;
  };
  std::string deep = R"({"params": )";
  for (int i = 0; i < 40; ++i) deep += "[";
  const std::vector<Case> cases = {
      {"", "empty"},
      {"[1, 2]", "not a JSON object"},
      {R"({"runId": "a"} {"runId": "b"})", "not a JSON gdrbench.v1.Run"},
      {R"({"runId": "a", "pairs": [)", "not a JSON gdrbench.v1.Run"},
      {R"({"runId": "a", "pairs": [1]})", "pairs[0] is not an object"},
      {R"({"runId": "a", "matrices": [[]]})", "matrices[0] is not an object"},
      {R"({"runId": "a", "pairs": [{"rail": "x"}]})", "pairs[0]"},
      {R"({"runId": 7)", "not a JSON gdrbench.v1.Run"},
      {deep, "nest more than"},
      {"{\"runId\": \"\xff\"}", "not a JSON gdrbench.v1.Run"},
  };
  for (const auto& c : cases) {
    RunJsonStream s;
    std::vector<v1::RunChunk> got;
    const absl::Status st = Stream(c.body, 3, &got, &s);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << c.body.substr(0, 60) << ": " << st;
    EXPECT_THAT(st.message(), HasSubstr(c.says)) << c.body.substr(0, 60);
    EXPECT_TRUE(got.empty()) << c.body.substr(0, 60);
  }
}

TEST(RunJsonStream, NullOrEmptyBulkyFieldsAreNoPairs) {
  for (const char* body : {R"({"runId": "a", "pairs": null, "matrices": []})", R"({"pairs": [], "runId": "a"})"}) {
    RunJsonStream s;
    std::vector<v1::RunChunk> got;
    ASSERT_TRUE(Stream(body, 2, &got, &s).ok()) << body;
    ASSERT_EQ(got.size(), 1u) << body;
    EXPECT_EQ(got[0].header().run_id(), "a");
    EXPECT_EQ(s.pairs(), 0u);
  }
}

}  // namespace
}  // namespace gdrbench::server::api
