#include "agent/memory/pattern.h"

#include <bit>
#include <cstring>

#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {

static_assert(std::endian::native == std::endian::little,
              "the pattern is defined little-endian; big-endian hosts need a byte swap here");

uint8_t PatternByte(uint64_t seed, uint64_t offset) {
  return static_cast<uint8_t>(PatternWord(seed, offset >> 3) >> ((offset & 7) * 8));
}

void CpuFillPattern(uint8_t* base, size_t offset, size_t length, uint64_t seed) {
  size_t pos = offset;
  const size_t end = offset + length;
  // Head and tail byte by byte; whole words in between (memcpy: no alignment
  // assumption on base, and it compiles to one store).
  while (pos < end && (pos & 7) != 0) {
    base[pos] = PatternByte(seed, pos);
    ++pos;
  }
  for (; pos + 8 <= end; pos += 8) {
    const uint64_t w = PatternWord(seed, pos >> 3);
    std::memcpy(base + pos, &w, sizeof(w));
  }
  for (; pos < end; ++pos) base[pos] = PatternByte(seed, pos);
}

int64_t CpuCheckPattern(const uint8_t* base, size_t offset, size_t length, uint64_t seed) {
  size_t pos = offset;
  const size_t end = offset + length;
  while (pos < end && (pos & 7) != 0) {
    if (base[pos] != PatternByte(seed, pos)) return static_cast<int64_t>(pos);
    ++pos;
  }
  for (; pos + 8 <= end; pos += 8) {
    uint64_t got;
    std::memcpy(&got, base + pos, sizeof(got));
    const uint64_t want = PatternWord(seed, pos >> 3);
    if (got != want) {
      // Little-endian: the lowest differing byte is the first bad offset.
      return static_cast<int64_t>(pos + std::countr_zero(got ^ want) / 8);
    }
  }
  for (; pos < end; ++pos) {
    if (base[pos] != PatternByte(seed, pos)) return static_cast<int64_t>(pos);
  }
  return -1;
}

}  // namespace gdrbench::agent::memory
