// A received pair chunk parsed and checked (pair_check.h). Every input is
// made by protobuf's own serializer (SerializeAsString, WireFormatLite) from
// messages written here by hand, never by the code under test; where a case
// turns on what the parser accepts, the test asks protobuf's parser too.
#include "server/history/pair_check.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "gtest/gtest.h"
#include "server/history/export.h"
#include "server/history/ingest.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {
namespace {

using ::testing::HasSubstr;

v1::PairResult Pair(const std::string& src, const std::string& dst) {
  v1::PairResult p;
  p.mutable_src()->set_node(src);
  p.mutable_src()->set_nic_device("mlx5_0");
  p.mutable_dst()->set_node(dst);
  p.mutable_dst()->set_nic_device("mlx5_1");
  p.set_rail(1);
  p.set_status(v1::RESULT_STATUS_OK);
  p.set_reason("");
  auto* s = p.add_sizes();
  s->set_size_bytes(1 << 20);
  s->set_bw_avg_gbps(97.5);
  s->set_bw_peak_gbps(98.1);
  p.mutable_started_at()->set_seconds(1767225600);
  return p;
}

std::string Chunk(const std::vector<v1::PairResult>& pairs) {
  v1::PairChunk c;
  for (const auto& p : pairs) *c.add_pairs() = p;
  return c.SerializeAsString();
}

// A PairChunk whose one pair is `pair_bytes` (field 1, length-delimited),
// written by protobuf's WireFormatLite.
std::string ChunkOfBytes(const std::string& pair_bytes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream s(&out);
    google::protobuf::io::CodedOutputStream o(&s);
    google::protobuf::internal::WireFormatLite::WriteBytes(v1::PairChunk::kPairsFieldNumber, pair_bytes, &o);
  }
  return out;
}

absl::StatusOr<uint32_t> CheckBytes(const std::string& bytes, uint64_t first_pair = 0) {
  history::PairChunkCheck check;
  return check.Check(bytes, first_pair);
}

TEST(PairCheck, AWellFormedChunkIsCountedAndTheParserAgrees) {
  const std::string bytes = Chunk({Pair("node1", "node2"), Pair("node2", "node1"), Pair("a", "b")});
  history::PairChunkCheck check;
  for (int again = 0; again < 2; ++again) {  // the arena reset between chunks
    auto n = check.Check(bytes, 0);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 3u);
  }
  v1::PairChunk parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(check.Check("", 0).value_or(99), 0u);  // no pairs
}

TEST(PairCheck, BytesThatAreNotAPairChunkAreRefused) {
  const std::string good = Chunk({Pair("node1", "node2"), Pair("node2", "node1")});
  for (size_t cut : {size_t{1}, good.size() / 2 + 3, good.size() - 1}) {  // inside a pair
    const std::string bad = good.substr(0, cut);
    v1::PairChunk parsed;
    ASSERT_FALSE(parsed.ParseFromString(bad)) << "cut at " << cut;
    auto n = CheckBytes(bad);
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument) << "cut at " << cut;
    EXPECT_THAT(std::string(n.status().message()), HasSubstr("not a serialized gdrbench.v1.PairChunk"));
  }
  EXPECT_THAT(std::string(CheckBytes(good.substr(0, good.size() - 1)).status().message()),
              HasSubstr("(pair 1 is cut short)"));
  // An empty pair parses (the ingest's check refuses it): the fault named is the next pair's.
  v1::PairResult bad = Pair("node1", "node2");
  bad.set_reason("\xc3\x28");  // not UTF-8
  EXPECT_THAT(std::string(CheckBytes(std::string("\x0a\x00", 2) + Chunk({bad})).status().message()),
              HasSubstr("(pair 1 does not parse as a gdrbench.v1.PairResult"));
}

// Whatever the parser makes of odd bytes, the check makes the same: a field
// number 0, a varint past 10 bytes, wire types 6 and 7 are refused; a group
// (wire type 3, closed) is an unknown field to protobuf 3.21's parser, kept.
TEST(PairCheck, OddBytesAreTakenExactlyWhenTheParserTakesThem) {
  for (const std::string odd :
       {std::string("\x0b\x0c", 2), std::string("\x02\x00", 2), std::string("\x0b", 1),
        std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12), std::string("\x0e\x00", 2),
        std::string("\x0f\x00", 2), std::string("\x10\x01", 2), std::string("\x0a\x00", 2)}) {
    v1::PairChunk parsed;
    const bool parser = parsed.ParseFromString(odd);
    auto n = CheckBytes(odd);
    // A pair of no fields has no node names: refused by the ingest's check, not the parser.
    if (parser && parsed.pairs_size() > 0) {
      EXPECT_THAT(std::string(n.status().message()), HasSubstr("pair 0: node name ''"));
      continue;
    }
    EXPECT_EQ(n.ok(), parser) << absl::CEscape(odd);
  }
}

TEST(PairCheck, AStringThatIsNotUtf8IsRefusedAsTheParserRefusesIt) {
  v1::PairResult p = Pair("node1", "node2");
  p.set_reason("bad \xc3\x28 byte");                             // an invalid two-byte sequence
  const std::string bytes = Chunk({Pair("node0", "node1"), p});  // serialized anyway (logged)
  v1::PairChunk parsed;
  EXPECT_FALSE(parsed.ParseFromString(bytes));
  auto n = CheckBytes(bytes, 1024);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(n.status().message()),
      HasSubstr("not a serialized gdrbench.v1.PairChunk (pair 1 does not parse as a gdrbench.v1.PairResult"));
  EXPECT_THAT(std::string(n.status().message()), HasSubstr("a string that is not UTF-8"));
}

// The received bytes and a parsed chunk (Ingester::Add) get the same check.
TEST(PairCheck, WhatTheIngestRequiresOfAPairIsCheckedNamingIt) {
  struct Case {
    std::function<void(v1::PairResult*)> mutate;
    std::string says;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Case> cases = {
      {[](v1::PairResult* p) { p->mutable_src()->set_node("no\x01"); }, "pair 1: node name 'no\x01' must be"},
      {[](v1::PairResult* p) { p->clear_dst(); }, "pair 1: node name '' must be 1 to 253"},
      {[](v1::PairResult* p) { p->set_status(static_cast<v1::ResultStatus>(99)); },
       "pair 1: status 99 is not a result status"},
      {[=](v1::PairResult* p) { p->mutable_sizes(0)->set_bw_avg_gbps(nan); },
       "pair 1: size 1048576 B: bandwidth is not a finite value >= 0"},
      {[](v1::PairResult* p) { p->mutable_sizes(0)->set_bw_avg_gbps(-1); },
       "bandwidth is not a finite value"},
      {[](v1::PairResult* p) { p->mutable_sizes(0)->set_bw_peak_gbps(INFINITY); },
       "bandwidth is not a finite value"},
      {[](v1::PairResult* p) { p->mutable_src()->set_agent_address("a\x1b[2J"); },
       "the pair chunk from pair 7: pairs[1].src.agent_address 'a\\x1b[2J' has the control character \\x1b"},
      {[](v1::PairResult* p) { p->add_memory_halves()->set_reason(std::string(20000, 'r')); },
       "the pair chunk from pair 7: pairs[1].memory_halves[0].reason: 20000 bytes, more than 16384"},
      // A status fault is reported before a string's, as the pair's own faults come first.
      {[](v1::PairResult* p) {
         p->set_link_flag("\x01");
         p->set_status(static_cast<v1::ResultStatus>(-3));
       },
       "pair 1: status -3 is not a result status"},
  };
  for (const Case& c : cases) {
    v1::PairResult bad = Pair("node1", "node2");
    c.mutate(&bad);
    v1::PairChunk parsed;
    *parsed.add_pairs() = Pair("node0", "node1");
    *parsed.add_pairs() = bad;
    for (const absl::StatusOr<uint32_t>& n :
         {CheckBytes(Chunk({Pair("node0", "node1"), bad}), 7), history::CheckPairChunk(parsed, 7)}) {
      EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument) << c.says;
      EXPECT_THAT(std::string(n.status().message()), HasSubstr(c.says));
    }
  }
}

// Every string field a pair holds, at any depth (found from the
// descriptors, so a field added to the .proto later is covered), is checked
// and named by its path: a control character in each is refused.
void StringPaths(const google::protobuf::Descriptor* d,
                 std::vector<const google::protobuf::FieldDescriptor*>* path,
                 std::set<const google::protobuf::Descriptor*>* seen,
                 std::vector<std::vector<const google::protobuf::FieldDescriptor*>>* out) {
  if (!seen->insert(d).second) return;  // PairResult.memory_halves: PairResult again
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    path->push_back(f);
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_STRING) out->push_back(*path);
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE)
      StringPaths(f->message_type(), path, seen, out);
    path->pop_back();
  }
}

TEST(PairCheck, EveryStringFieldOfAPairIsCheckedAndNamed) {
  std::vector<const google::protobuf::FieldDescriptor*> path;
  std::set<const google::protobuf::Descriptor*> seen;
  std::vector<std::vector<const google::protobuf::FieldDescriptor*>> paths;
  StringPaths(v1::PairResult::descriptor(), &path, &seen, &paths);
  ASSERT_GE(paths.size(), 24u);  // 24 when this was written
  for (const auto& p : paths) {
    v1::PairResult pair = Pair("node1", "node2");
    google::protobuf::Message* m = &pair;
    std::string name = "pairs[1]";
    for (const google::protobuf::FieldDescriptor* f : p) {
      const auto* r = m->GetReflection();
      absl::StrAppend(&name, ".", f->name());
      if (f->is_repeated()) absl::StrAppend(&name, "[", r->FieldSize(*m, f), "]");  // the one added below
      if (f->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
        f->is_repeated() ? r->AddString(m, f, "x\x01") : r->SetString(m, f, "x\x01");
      } else {
        m = f->is_repeated() ? r->AddMessage(m, f) : r->MutableMessage(m, f);
      }
    }
    auto n = CheckBytes(Chunk({Pair("node0", "node1"), pair}));
    ASSERT_FALSE(n.ok()) << name;
    const std::string says(n.status().message());
    if (name == "pairs[1].src.node" || name == "pairs[1].dst.node") {
      EXPECT_THAT(says, HasSubstr("pair 1: node name 'x\x01'"));
    } else {
      EXPECT_THAT(says, HasSubstr(absl::StrCat(name, " 'x\\x01' has the control character \\x01"))) << name;
    }
  }
}

// A message field given twice in the bytes is merged by the parser: the
// check reads the value the parser keeps, which is what every reader of the
// stored bytes gets.
TEST(PairCheck, AFieldGivenTwiceIsCheckedAsTheParserMergesIt) {
  v1::PairResult patch;
  patch.mutable_src()->set_node("bad\x7f");
  const std::string merged = Pair("node1", "node2").SerializeAsString() + patch.SerializeAsString();
  v1::PairChunk parsed;
  ASSERT_TRUE(parsed.ParseFromString(ChunkOfBytes(merged)));
  ASSERT_EQ(parsed.pairs(0).src().node(), "bad\x7f");
  EXPECT_THAT(std::string(CheckBytes(ChunkOfBytes(merged)).status().message()),
              HasSubstr("pair 0: node name 'bad"));

  v1::PairResult fix;
  fix.mutable_src()->set_node("node9");
  const std::string fixed = Pair("no\x01", "node2").SerializeAsString() + fix.SerializeAsString();
  ASSERT_TRUE(parsed.ParseFromString(ChunkOfBytes(fixed)));
  ASSERT_EQ(parsed.pairs(0).src().node(), "node9");
  EXPECT_EQ(CheckBytes(ChunkOfBytes(fixed)).value_or(0), 1u);  // the name read is node9
}

TEST(PairCheck, OnlyAPairChunkGivenOnceIsTakenFromARunChunkAsItCame) {
  v1::RunChunk c;
  *c.mutable_pairs()->add_pairs() = Pair("node1", "node2");
  const std::string bytes = c.SerializeAsString();
  auto view = history::SinglePairChunk(bytes);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(std::string(*view), c.pairs().SerializeAsString());
  // An unknown field (number 15, a varint) around it: parsed whole, not taken.
  const std::string unknown("\x78\x05", 2);
  EXPECT_FALSE(history::SinglePairChunk(unknown + bytes).has_value());
  EXPECT_FALSE(history::SinglePairChunk(bytes + unknown).has_value());
  // The tag written in 8 bytes (CodedInputStream keeps its low 32 bits, the parser refuses it), and the
  // length in 2 where 1 does: refused to the fast path.
  ASSERT_LT(bytes[1] & 0xff, 0x80);
  const std::string long_tag = std::string("\x9a\x80\x80\x80\x80\x80\x80\x00", 8) + bytes.substr(1);
  ASSERT_FALSE(c.ParseFromString(long_tag));
  EXPECT_FALSE(history::SinglePairChunk(long_tag).has_value());
  const std::string long_len = bytes.substr(0, 1) + std::string(1, static_cast<char>(bytes[1] | 0x80)) +
                               std::string(1, '\0') + bytes.substr(2);
  ASSERT_TRUE(c.ParseFromString(long_len));
  EXPECT_FALSE(history::SinglePairChunk(long_len).has_value());
  v1::RunChunk header;
  header.mutable_header()->set_run_id("r");
  EXPECT_FALSE(history::SinglePairChunk(header.SerializeAsString()).has_value());
  EXPECT_FALSE(history::SinglePairChunk("").has_value());
  // Two pieces a parser would merge; a cut message; a tag 0 at the end (the parser refuses it).
  EXPECT_FALSE(history::SinglePairChunk(bytes + bytes).has_value());
  EXPECT_FALSE(history::SinglePairChunk(bytes.substr(0, bytes.size() - 1)).has_value());
  ASSERT_FALSE(c.ParseFromString(bytes + std::string(1, '\0')));
  EXPECT_FALSE(history::SinglePairChunk(bytes + std::string(1, '\0')).has_value());
}

// Through the ingest: a malformed chunk fails the upload with the chunk's
// number and nothing is stored.
TEST(PairCheck, TheIngestRefusesAMalformedChunkAndStoresNothing) {
  auto store = testing::OpenTestStore("pair_check_ingest");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Run run = testing::FakeRun({});
  v1::Run header = run;
  header.clear_pairs();
  for (auto& m : *header.mutable_matrices()) m.clear_cells();
  history::Ingester ingest(**store, {});
  ASSERT_TRUE(ingest.Begin(header).ok());
  const std::string good = Chunk({run.pairs(0), run.pairs(1)});
  ASSERT_TRUE(ingest.AddSerializedPairs(good).ok());
  absl::Status st = ingest.AddSerializedPairs(good.substr(0, good.size() - 3));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr(absl::StrCat("run ", run.run_id(), ": chunk 2: not a serialized")));
  EXPECT_FALSE(ingest.Finish().ok());
  auto found = (*store)->FindRun(run.run_id());
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

// The same run stored through AddSerializedPairs reads back pair for pair.
TEST(PairCheck, ReceivedChunksAreStoredAsTheyCame) {
  auto store = testing::OpenTestStore("pair_check_stored");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Run run = testing::FakeRun({});
  v1::Run header = run;
  header.clear_pairs();
  std::vector<v1::MatrixCells> cells;
  for (auto& m : *header.mutable_matrices()) {
    v1::MatrixCells mc;
    mc.set_rail(m.rail());
    mc.set_size_bytes(m.size_bytes());
    *mc.mutable_cells() = m.cells();
    cells.push_back(mc);
    m.clear_cells();
  }
  history::Ingester ingest(**store, {});
  ASSERT_TRUE(ingest.Begin(header).ok());
  for (const auto& mc : cells) {
    v1::RunChunk c;
    *c.mutable_cells() = mc;
    absl::Status added = ingest.Add(c);
    ASSERT_TRUE(added.ok()) << added;
  }
  ASSERT_TRUE(
      ingest.AddSerializedPairs(Chunk(std::vector<v1::PairResult>(run.pairs().begin(), run.pairs().end())))
          .ok());
  auto resp = ingest.Finish();
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->pairs(), static_cast<uint64_t>(run.pairs_size()));
  auto row = (*store)->FindRun(run.run_id());
  ASSERT_TRUE(row.ok() && *row);
  std::vector<std::string> back;
  ASSERT_TRUE(history::ExportRun(**store, **row, [&](const v1::RunChunk& c) {
                for (const auto& p : c.pairs().pairs()) back.push_back(p.SerializeAsString());
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(back.size(), static_cast<size_t>(run.pairs_size()));
  for (int i = 0; i < run.pairs_size(); ++i) EXPECT_EQ(back[i], run.pairs(i).SerializeAsString()) << i;
}

}  // namespace
}  // namespace gdrbench::server
