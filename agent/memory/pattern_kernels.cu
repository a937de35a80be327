// The integrity pattern on the GPU: fill and first-mismatch check, compiled to
// PTX at build time (nvcc -ptx), embedded in the memory library and loaded with
// cuModuleLoadData (no cudart). PatternWord comes from pattern_word.h, the same
// definition the CPU uses, so the two sides cannot drift apart.
//
// Layout of work: the range [offset, offset+length) is split into a head and
// tail of at most 15 bytes each (thread 0 of block 0 does those byte by byte)
// and an aligned middle of 16-byte pairs of words that every thread walks with
// a grid-stride loop, one 128-bit load or store per step, so the kernels run
// at memory bandwidth.
#include "agent/memory/pattern_word.h"

using gdrbench::agent::memory::PatternWord;

namespace {

__device__ __forceinline__ unsigned char PatternByteAt(unsigned long long seed,
                                                       unsigned long long pos) {
  return static_cast<unsigned char>(PatternWord(seed, pos >> 3) >> ((pos & 7) * 8));
}

// The aligned middle: pairs [first_pair, last_pair) of 16 bytes each.
__device__ __forceinline__ void Split(unsigned long long offset, unsigned long long length,
                                      unsigned long long* first_pair,
                                      unsigned long long* last_pair) {
  const unsigned long long end = offset + length;
  *first_pair = (offset + 15) >> 4;
  *last_pair = end >> 4;
  if (*first_pair > *last_pair) *first_pair = *last_pair;  // range inside one pair
}

}  // namespace

extern "C" __global__ void gdr_pattern_fill(unsigned char* base, unsigned long long offset,
                                            unsigned long long length, unsigned long long seed) {
  unsigned long long first_pair, last_pair;
  Split(offset, length, &first_pair, &last_pair);
  const unsigned long long end = offset + length;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long head_end = first_pair < last_pair ? first_pair * 16 : end;
    for (unsigned long long pos = offset; pos < head_end; ++pos) base[pos] = PatternByteAt(seed, pos);
    if (first_pair < last_pair) {
      for (unsigned long long pos = last_pair * 16; pos < end; ++pos) {
        base[pos] = PatternByteAt(seed, pos);
      }
    }
  }
  ulonglong2* pairs = reinterpret_cast<ulonglong2*>(base);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long p = first_pair + blockIdx.x * blockDim.x + threadIdx.x; p < last_pair;
       p += stride) {
    ulonglong2 v;
    v.x = PatternWord(seed, 2 * p);
    v.y = PatternWord(seed, 2 * p + 1);
    pairs[p] = v;
  }
}

// *first_bad must be ~0ull on entry; it ends as the lowest mismatching offset.
extern "C" __global__ void gdr_pattern_check(const unsigned char* base, unsigned long long offset,
                                             unsigned long long length, unsigned long long seed,
                                             unsigned long long* first_bad) {
  unsigned long long first_pair, last_pair;
  Split(offset, length, &first_pair, &last_pair);
  const unsigned long long end = offset + length;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long head_end = first_pair < last_pair ? first_pair * 16 : end;
    for (unsigned long long pos = offset; pos < head_end; ++pos) {
      if (base[pos] != PatternByteAt(seed, pos)) {
        atomicMin(first_bad, pos);
        break;
      }
    }
    if (first_pair < last_pair) {
      for (unsigned long long pos = last_pair * 16; pos < end; ++pos) {
        if (base[pos] != PatternByteAt(seed, pos)) {
          atomicMin(first_bad, pos);
          break;
        }
      }
    }
  }
  const ulonglong2* pairs = reinterpret_cast<const ulonglong2*>(base);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long p = first_pair + blockIdx.x * blockDim.x + threadIdx.x; p < last_pair;
       p += stride) {
    const ulonglong2 v = pairs[p];
    const unsigned long long dx = v.x ^ PatternWord(seed, 2 * p);
    const unsigned long long dy = v.y ^ PatternWord(seed, 2 * p + 1);
    if (dx != 0) {
      // Little-endian: the lowest set bit's byte is the first bad byte.
      atomicMin(first_bad, 16 * p + (__ffsll(static_cast<long long>(dx)) - 1) / 8);
    } else if (dy != 0) {
      atomicMin(first_bad, 16 * p + 8 + (__ffsll(static_cast<long long>(dy)) - 1) / 8);
    }
  }
}
