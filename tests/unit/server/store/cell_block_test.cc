// A run's cells as stored blocks (server/store/cell_block.h): every value
// back bit for bit, every reason byte for byte, the writer's mistakes and
// damaged blocks refused with the reason, and nothing of a damaged block
// handed out.
#include "server/store/cell_block.h"

#include <bit>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/chunk_codec.h"

namespace gdrbench::server::store {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kZstd = static_cast<int64_t>(ChunkEncoding::kZstd);

CellRecord KeyOf() {
  CellRecord k;
  k.run = 7;
  k.rail = 3;
  k.size_bytes = 1 << 20;
  k.src = 42;
  return k;
}

std::vector<CellRecord> Decode(const std::string& data, absl::Status* st = nullptr) {
  std::vector<CellRecord> out;
  absl::Status s = DecodeCellBlock(kZstd, data, KeyOf(), [&](const CellRecord& c) {
    out.push_back(c);
    return absl::OkStatus();
  });
  if (st != nullptr) {
    *st = s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
  return out;
}

// The block's bytes before compression, and compressed again after an edit.
std::string Raw(const std::string& data) {
  auto raw = DecodeStored(kZstd, data, "test");
  EXPECT_TRUE(raw.ok()) << raw.status();
  return raw.ok() ? *raw : "";
}

std::string Pack(const std::string& raw) {
  auto out = CompressChunk(raw);
  EXPECT_TRUE(out.ok());
  return out.ok() ? *out : "";
}

TEST(CellBlock, EveryValueComesBackBitForBit) {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
  const std::string longest(65535, 'r');
  std::vector<BlockCell> cells = {
      {-5, 0, 0, 0.0, -0.0, std::numeric_limits<double>::denorm_min(), ""},
      {0, 255, 255, std::numeric_limits<double>::max(), 1.0 / 3, 1e-300, all_bytes},
      {1, 1, 1, 387.25, 400, 0.1 + 0.2, "tab\there\nline\\ \"q\" \\N"},
      {std::numeric_limits<int64_t>::max(), 4, 3, std::numeric_limits<double>::infinity(),
       std::numeric_limits<double>::quiet_NaN(), 5, longest},
  };
  auto data = EncodeCellBlock(cells);
  ASSERT_TRUE(data.ok()) << data.status();
  auto back = Decode(*data);
  ASSERT_EQ(back.size(), cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellRecord& c = back[i];
    EXPECT_EQ(c.run, 7);
    EXPECT_EQ(c.rail, 3u);
    EXPECT_EQ(c.size_bytes, 1u << 20);
    EXPECT_EQ(c.src, 42);
    EXPECT_EQ(c.dst, cells[i].dst);
    EXPECT_EQ(c.status, cells[i].status);
    EXPECT_EQ(c.verdict, cells[i].verdict);
    EXPECT_EQ(std::bit_cast<uint64_t>(c.bw_avg_gbps), std::bit_cast<uint64_t>(cells[i].bw_avg_gbps)) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(c.expected_gbps), std::bit_cast<uint64_t>(cells[i].expected_gbps)) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(c.baseline_gbps), std::bit_cast<uint64_t>(cells[i].baseline_gbps)) << i;
    EXPECT_EQ(c.reason, std::string(cells[i].reason)) << i;
  }
}

// A block of cell_blocks_in: the row's key is the destination, each cell's
// node field its source.
TEST(CellBlock, ADestinationsBlockNamesTheSources) {
  auto data = EncodeCellBlock({{5, 1, 0, 1, 2, 3, ""}, {9, 1, 0, 4, 5, 6, "r"}});
  ASSERT_TRUE(data.ok());
  CellRecord key = KeyOf();
  key.src = 0;
  key.dst = 42;
  std::vector<CellRecord> back;
  ASSERT_TRUE(DecodeCellBlock(
                  kZstd, *data, key,
                  [&](const CellRecord& c) {
                    back.push_back(c);
                    return absl::OkStatus();
                  },
                  /*by_destination=*/true)
                  .ok());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].src, 5);
  EXPECT_EQ(back[1].src, 9);
  EXPECT_EQ(back[0].dst, 42);
  EXPECT_EQ(back[1].dst, 42);
  EXPECT_EQ(back[1].reason, "r");
  absl::Status st = DecodeCellBlock(
      kZstd, "x", key, [](const CellRecord&) { return absl::OkStatus(); }, true);
  EXPECT_THAT(std::string(st.message()), HasSubstr("not a zstd frame"));
}

TEST(CellBlock, AnEmptyBlockHasNoCells) {
  auto data = EncodeCellBlock({});
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE(Decode(*data).empty());
}

TEST(CellBlock, TheLayoutIsTheOneTheHeaderStates) {
  std::vector<BlockCell> cells = {{0x0102030405060708, 1, 2, 1.5, 2.5, 3.5, "ab"},
                                  {0x0102030405060709, 3, 0, 0, 0, 0, "c"}};
  auto data = EncodeCellBlock(cells);
  ASSERT_TRUE(data.ok());
  const std::string raw = Raw(*data);
  ASSERT_EQ(raw.size(), 4u + 2 * 36 + 3);
  EXPECT_EQ(raw.substr(0, 4), std::string("\x02\x00\x00\x00", 4));
  EXPECT_EQ(raw.substr(4, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));  // little-endian dst
  EXPECT_EQ(raw[12], 1);                                                            // status
  EXPECT_EQ(raw[13], 2);                                                            // verdict
  EXPECT_EQ(raw.substr(14, 2), std::string("\x02\x00", 2));                         // reason bytes
  double bw;
  std::memcpy(&bw, raw.data() + 16, 8);
  EXPECT_EQ(bw, 1.5);
  EXPECT_EQ(raw.substr(4 + 72), "abc");  // the reasons, in order
}

TEST(CellBlock, TheWritersMistakesAreRefused) {
  auto refused = [](std::vector<BlockCell> cells, const std::string& why) {
    auto data = EncodeCellBlock(cells);
    EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_THAT(std::string(data.status().message()), HasSubstr(why));
  };
  refused({{1, 1, 0, 0, 0, 0, ""}, {1, 1, 0, 0, 0, 0, ""}},
          "destination 1 after 1 (a cell twice, or out of order)");
  refused({{2, 1, 0, 0, 0, 0, ""}, {1, 1, 0, 0, 0, 0, ""}}, "destination 1 after 2");
  refused({{1, 256, 0, 0, 0, 0, ""}}, "status 256 or verdict 0 is not 0 to 255");
  refused({{1, 1, -1, 0, 0, 0, ""}}, "status 1 or verdict -1 is not 0 to 255");
  const std::string too_long(65536, 'x');
  refused({{1, 1, 0, 0, 0, 0, too_long}}, "a reason of 65536 bytes");
}

TEST(CellBlock, ADamagedBlockHandsOutNothing) {
  std::vector<BlockCell> cells = {{1, 1, 1, 10, 20, 30, "why"}, {2, 1, 1, 11, 21, 31, ""}};
  auto data = EncodeCellBlock(cells);
  ASSERT_TRUE(data.ok());
  const std::string raw = Raw(*data);
  auto lost = [](const std::string& stored, int64_t encoding, const std::string& why) {
    size_t handed = 0;
    absl::Status st = DecodeCellBlock(encoding, stored, KeyOf(), [&](const CellRecord&) {
      ++handed;
      return absl::OkStatus();
    });
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << why << ": " << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(why));
    EXPECT_EQ(handed, 0u) << why;
  };
  lost(data->substr(0, data->size() - 3), kZstd, "cell block: ");
  lost("plain text", kZstd, "cell block: not a zstd frame");
  lost(*data, 9, "cell block: unknown encoding 9");
  lost(Pack("\x01\x00"), kZstd,
       "cell block of run #7 rail 3 size 1048576 source #42: shorter than its count");
  std::string more = raw;
  more[0] = 3;  // claims 3 cells
  lost(Pack(more), kZstd, "3 cells do not fit in 79 bytes");
  lost(Pack(raw + "x"), kZstd, "its reasons add up to 3 bytes, 4 are there");
  lost(Pack(raw.substr(0, raw.size() - 1)), kZstd, "its reasons add up to 3 bytes, 2 are there");
}

TEST(CellBlock, TheCallersErrorStopsTheBlock) {
  auto data = EncodeCellBlock({{1, 1, 1, 1, 1, 1, ""}, {2, 1, 1, 1, 1, 1, ""}});
  ASSERT_TRUE(data.ok());
  size_t handed = 0;
  absl::Status st = DecodeCellBlock(kZstd, *data, KeyOf(), [&](const CellRecord&) {
    ++handed;
    return absl::CancelledError("enough");
  });
  EXPECT_TRUE(absl::IsCancelled(st));
  EXPECT_EQ(handed, 1u);
}

}  // namespace
}  // namespace gdrbench::server::store
