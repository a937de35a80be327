// The one definition of the integrity pattern word, compiled both by the host
// compiler and by nvcc (pattern_kernels.cu), so CPU and GPU cannot diverge.
// Word w of stream `seed` is a SplitMix64 finaliser of (w + seed * K + golden).
// Plain C++ (no std headers) so nvcc compiles it without the host library.
#pragma once

#if defined(__CUDACC__)
#define GDR_HOST_DEVICE __host__ __device__
#else
#define GDR_HOST_DEVICE
#endif

namespace gdrbench::agent::memory {

inline constexpr unsigned long long kPatternSeedMultiplier = 0xD1B54A32D192ED03ull;

GDR_HOST_DEVICE constexpr unsigned long long PatternWord(unsigned long long seed,
                                                         unsigned long long word_index) {
  unsigned long long z = word_index + seed * kPatternSeedMultiplier + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace gdrbench::agent::memory
