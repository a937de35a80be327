// A run's pair chunks kept compressed (server/store/chunk_codec.h): round
// trips, the rows a server before schema version 4 stored (plain), and
// stored data that is damaged or lies about its size. The zstd frame layout
// used for the forged header is RFC 8878 section 3.1.1 (magic 0xFD2FB528,
// Frame_Header_Descriptor, Frame_Content_Size).
#include "server/store/chunk_codec.h"

#include <sqlite3.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/history/export.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server::store {
namespace {

using ::testing::HasSubstr;

std::string SomeChunk() {
  v1::PairChunk chunk;
  for (int i = 0; i < 200; ++i) {
    v1::PairResult* p = chunk.add_pairs();
    p->mutable_src()->set_node("node" + std::to_string(i % 16));
    p->mutable_dst()->set_node("node" + std::to_string((i + 1) % 16));
    p->mutable_src()->set_nic_device("mlx5_0");
    p->add_sizes()->set_bw_avg_gbps(380.5 + i);
    p->mutable_summary()->set_perftest_command("ib_write_bw -d mlx5_0 -s 1048576 -n 1000 10.0.0.2");
  }
  return chunk.SerializeAsString();
}

TEST(ChunkCodec, ACompressedChunkDecodesToItsBytes) {
  const std::string raw = SomeChunk();
  auto stored = CompressChunk(raw);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_LT(stored->size() * 5, raw.size());  // repetitive pair results compress well
  auto back = DecodeChunk(static_cast<int64_t>(ChunkEncoding::kZstd), *stored);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, raw);
  auto empty = CompressChunk("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*DecodeChunk(1, *empty), "");
}

TEST(ChunkCodec, APlainRowOfAnOlderServerReadsAsItIs) {
  const std::string raw = SomeChunk();
  auto back = DecodeChunk(static_cast<int64_t>(ChunkEncoding::kRaw), raw);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, raw);
}

TEST(ChunkCodec, DamagedOrUnknownDataIsDataLossWithItsReason) {
  const std::string raw = SomeChunk();
  const std::string stored = *CompressChunk(raw);
  auto unknown = DecodeChunk(7, stored);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown encoding 7"));

  auto garbage = DecodeChunk(1, raw);  // a plain chunk marked as compressed
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(garbage.status().message(), HasSubstr("not a zstd frame"));

  auto cut = DecodeChunk(1, stored.substr(0, stored.size() / 2));
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss) << cut.status();

  std::string flipped = stored;
  flipped[flipped.size() / 2] ^= 0x5a;
  auto bad = DecodeChunk(1, flipped);
  if (bad.ok()) {
    EXPECT_NE(*bad, raw);  // zstd frames here carry no checksum: only the parse that follows can tell
  } else {
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  }
}

// A frame whose header claims 64 GiB (RFC 8878: magic, descriptor 0xE0 =
// 8-byte Frame_Content_Size and Single_Segment, then the size) is refused
// before anything is allocated.
TEST(ChunkCodec, AFrameClaimingMoreThanAChunkMayHoldIsRefused) {
  std::string forged = {'\x28', '\xb5', '\x2f', '\xfd', '\xe0'};
  const uint64_t claimed = uint64_t{64} << 30;
  for (int i = 0; i < 8; ++i) forged.push_back(static_cast<char>((claimed >> (8 * i)) & 0xff));
  forged += std::string(16, '\0');
  auto r = DecodeChunk(1, forged);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("claims 68719476736 bytes"));
}

// A store that a version-3 server wrote (plain chunks, encoding 0 after the
// migration added the column) reads back whole, beside compressed rows.
TEST(ChunkCodec, AStoreWithPlainAndCompressedChunksReadsBackWhole) {
  const auto dir = std::filesystem::temp_directory_path() / ("gdrbench-chunk-codec-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "mixed.db").string();
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  testing::FakeRunSpec spec;
  spec.nodes = 40;  // 1560 pairs: two chunks of at most 1024
  spec.run_id = "mixed";
  const v1::Run run = testing::FakeRun(spec);
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(history::StoreRun(**store, run, {}).ok());
  }
  // Every other chunk rewritten as an older server stored it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* read = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT chunk, data, encoding FROM run_pairs", -1, &read, nullptr), SQLITE_OK);
  std::vector<std::pair<int64_t, std::string>> plain;
  int rows = 0;
  while (sqlite3_step(read) == SQLITE_ROW) {
    ++rows;
    const int64_t chunk = sqlite3_column_int64(read, 0);
    EXPECT_EQ(sqlite3_column_int64(read, 2), 1) << "chunk " << chunk << " is stored compressed";
    std::string data(static_cast<const char*>(sqlite3_column_blob(read, 1)), sqlite3_column_bytes(read, 1));
    if (chunk % 2 == 0) plain.emplace_back(chunk, *DecodeChunk(1, data));
  }
  sqlite3_finalize(read);
  ASSERT_GE(rows, 2);
  ASSERT_GE(plain.size(), 1u);
  ASSERT_LT(plain.size(), static_cast<size_t>(rows));
  for (const auto& [chunk, data] : plain) {
    sqlite3_stmt* up = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE run_pairs SET data = ?, encoding = 0 WHERE chunk = ?", -1, &up, nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(up, 1, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(up, 2, chunk);
    EXPECT_EQ(sqlite3_step(up), SQLITE_DONE);
    sqlite3_finalize(up);
  }
  sqlite3_close(db);

  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto row = (*store)->FindRun("mixed");
  ASSERT_TRUE(row.ok() && row->has_value());
  auto whole = history::AssembleRun(**store, **row, 100000);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->pairs_size(), run.pairs_size());
  for (int i = 0; i < run.pairs_size(); ++i) {
    EXPECT_EQ(whole->pairs(i).SerializeAsString(), run.pairs(i).SerializeAsString()) << "pair " << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gdrbench::server::store
