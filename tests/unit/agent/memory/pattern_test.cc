#include "agent/memory/pattern.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {
namespace {

TEST(Pattern, ByteIsLittleEndianByteOfItsWord) {
  for (uint64_t off = 0; off < 64; ++off) {
    const uint64_t w = PatternWord(42, off / 8);
    EXPECT_EQ(PatternByte(42, off), static_cast<uint8_t>(w >> (8 * (off % 8)))) << off;
  }
}

TEST(Pattern, SeedsGiveDifferentStreams) {
  int same = 0;
  for (uint64_t off = 0; off < 4096; ++off) same += PatternByte(1, off) == PatternByte(2, off);
  // Independent streams agree on about 1/256 of the bytes.
  EXPECT_LT(same, 64);
}

TEST(Pattern, StreamIsNotTrivial) {
  // Catches a pattern that degenerated into zeros or a repeating word.
  EXPECT_NE(PatternWord(0, 0), 0u);
  EXPECT_NE(PatternWord(0, 0), PatternWord(0, 1));
  EXPECT_NE(PatternWord(7, 100), PatternWord(7, 101));
}

TEST(Pattern, FillMatchesByteDefinitionAtUnalignedEdges) {
  std::vector<uint8_t> buf(100, 0xEE);
  CpuFillPattern(buf.data(), 3, 90, 9);
  for (size_t i = 0; i < buf.size(); ++i) {
    if (i < 3 || i >= 93) {
      EXPECT_EQ(buf[i], 0xEE) << "byte outside the range was written at " << i;
    } else {
      EXPECT_EQ(buf[i], PatternByte(9, i)) << i;
    }
  }
  EXPECT_EQ(CpuCheckPattern(buf.data(), 3, 90, 9), -1);
}

TEST(Pattern, CheckReportsFirstBadOffset) {
  std::vector<uint8_t> buf(4096);
  CpuFillPattern(buf.data(), 0, buf.size(), 5);
  for (size_t bad : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{1234}, size_t{4095}}) {
    std::vector<uint8_t> copy = buf;
    copy[bad] ^= 0x10;
    if (bad + 3 < copy.size()) copy[bad + 3] ^= 0x01;  // a later error must not win
    EXPECT_EQ(CpuCheckPattern(copy.data(), 0, copy.size(), 5), static_cast<int64_t>(bad));
  }
}

TEST(Pattern, CheckOnlyLooksInsideItsRange) {
  std::vector<uint8_t> buf(256);
  CpuFillPattern(buf.data(), 16, 200, 1);
  EXPECT_EQ(CpuCheckPattern(buf.data(), 16, 200, 1), -1);
  EXPECT_EQ(CpuCheckPattern(buf.data(), 15, 201, 1), 15);  // byte 15 was never written
  EXPECT_EQ(CpuCheckPattern(buf.data(), 16, 200, 2), 16);  // wrong seed
}

}  // namespace
}  // namespace gdrbench::agent::memory
