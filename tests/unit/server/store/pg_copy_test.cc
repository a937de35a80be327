// PostgreSQL's binary COPY encoding (server/store/pg_copy.h), byte for byte
// against the format the PostgreSQL 15 manual states (sql-copy.html,
// "Binary Format"); the integration tier's store suite loads it into a real
// server (tests/integration/server/postgres_store_factory.cc).
#include "server/store/pg_copy.h"

#include <bit>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::server::store {
namespace {

using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> b) {
  std::string out;
  for (int x : b) out.push_back(static_cast<char>(x));
  return out;
}

TEST(PgCopy, HeaderAndTrailerAreTheManualsBytes) {
  EXPECT_EQ(CopyBinaryHeader(),
            Bytes({'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(CopyBinaryTrailer(), Bytes({0xff, 0xff}));
}

TEST(PgCopy, EveryColumnTypeInNetworkOrder) {
  const BulkColumn cols[] = {{"a", ColumnType::kInt16}, {"b", ColumnType::kInt32},
                             {"c", ColumnType::kInt64}, {"d", ColumnType::kFloat64},
                             {"e", ColumnType::kText},  {"f", ColumnType::kBytes}};
  std::string out;
  ASSERT_TRUE(AppendCopyTuple(cols,
                              {int64_t{-2}, int64_t{0x01020304}, int64_t{-0x0102030405060708}, 1.0,
                               std::string_view("h\xc3\xa9"), Blob{std::string_view("\x00\x01", 2)}},
                              &out)
                  .ok());
  EXPECT_EQ(out,
            Bytes({0, 6,                                                        // 6 fields
                   0, 0, 0, 2, 0xff, 0xfe,                                      // smallint -2
                   0, 0, 0, 4, 1,    2,    3,    4,                             // integer
                   0, 0, 0, 8, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf8,  // bigint, two's complement
                   0, 0, 0, 8, 0x3f, 0xf0, 0,    0,    0,    0,    0,    0,     // float8 1.0
                   0, 0, 0, 3, 'h',  0xc3, 0xa9,                                // text, UTF-8 as is
                   0, 0, 0, 2, 0,    1}));                                      // bytea, a NUL byte included
}

TEST(PgCopy, NullIsLengthMinusOneInAnyColumn) {
  const BulkColumn cols[] = {{"a", ColumnType::kInt64}, {"b", ColumnType::kText}, {"c", ColumnType::kBytes}};
  std::string out;
  ASSERT_TRUE(AppendCopyTuple(cols, {nullptr, nullptr, nullptr}, &out).ok());
  EXPECT_EQ(out, Bytes({0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  // Empty is not NULL.
  out.clear();
  ASSERT_TRUE(AppendCopyTuple(cols, {int64_t{0}, std::string_view(), Blob{}}, &out).ok());
  EXPECT_EQ(out, Bytes({0, 3, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

// Nothing in the binary format is escaped: the text format's delimiters and
// its NULL marker go through as the bytes they are.
TEST(PgCopy, TextGoesAsItIsWithNothingEscaped) {
  const BulkColumn cols[] = {{"t", ColumnType::kText}};
  const std::string text = "a\tb\nc\\d\\N\r'\"";
  std::string out;
  ASSERT_TRUE(AppendCopyTuple(cols, {std::string_view(text)}, &out).ok());
  EXPECT_EQ(out, Bytes({0, 1, 0, 0, 0, static_cast<int>(text.size())}) + text);
}

TEST(PgCopy, DoublesKeepEveryBit) {
  const BulkColumn cols[] = {{"d", ColumnType::kFloat64}};
  for (double d : {-0.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::infinity(),
                   0.1 + 0.2}) {
    std::string out;
    ASSERT_TRUE(AppendCopyTuple(cols, {d}, &out).ok());
    ASSERT_EQ(out.size(), 2u + 4 + 8);
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | static_cast<uint8_t>(out[6 + i]);
    EXPECT_EQ(bits, std::bit_cast<uint64_t>(d)) << d;
  }
}

TEST(PgCopy, AValueThatDoesNotFitIsRefusedAndNothingAppended) {
  const BulkColumn cols[] = {
      {"small", ColumnType::kInt16}, {"n", ColumnType::kInt32}, {"data", ColumnType::kBytes}};
  auto refused = [&](std::vector<SqlValue> row, const std::string& why) {
    std::string out = "kept";
    absl::Status st = AppendCopyTuple(cols, row, &out);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_THAT(std::string(st.message()), HasSubstr(why));
    EXPECT_EQ(out, "kept");
  };
  refused({int64_t{32768}, int64_t{1}, Blob{}}, "the integer 32768 does not fit column small (smallint)");
  refused({int64_t{-32769}, int64_t{1}, Blob{}}, "the integer -32769 does not fit column small (smallint)");
  refused({int64_t{1}, int64_t{1} << 31, Blob{}}, "the integer 2147483648 does not fit column n (integer)");
  refused({int64_t{1}, 1.5, Blob{}}, "a double does not fit column n (integer)");
  refused({int64_t{1}, int64_t{1}, std::string_view("x")}, "text does not fit column data (bytea)");
  refused({int64_t{1}, int64_t{1}}, "a row of 2 values for 3 columns");
  std::string out;
  EXPECT_TRUE(AppendCopyTuple(cols, {int64_t{32767}, int64_t{-2147483648LL}, Blob{}}, &out).ok());
}

}  // namespace
}  // namespace gdrbench::server::store
