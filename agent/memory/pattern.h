// The integrity pattern shared by every buffer kind and both ends of a test.
//
// The stream is defined per 8-byte word (PatternWord in pattern_word.h, the
// one definition the CUDA kernels in pattern_kernels.cu compile too), so CPUs
// and GPUs produce it at memory speed: byte `offset` is byte (offset % 8) of
// word (offset / 8), little-endian.
// The pattern is a function of the absolute buffer offset, so any sub-range
// can be filled on one side and checked on the other.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/memory/pattern_word.h"

namespace gdrbench::agent::memory {

// Writes the pattern for buffer offsets [offset, offset+length) into
// `base + offset` (base is the buffer start, host-addressable).
void CpuFillPattern(uint8_t* base, size_t offset, size_t length, uint64_t seed);

// The first absolute offset in [offset, offset+length) whose byte differs
// from the pattern, or -1 when all match.
int64_t CpuCheckPattern(const uint8_t* base, size_t offset, size_t length, uint64_t seed);

}  // namespace gdrbench::agent::memory
