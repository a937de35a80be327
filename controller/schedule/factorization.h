// Round-robin 1-factorization of the complete graph K_n (the circle method):
// every unordered pair {a, b} of 0..n-1 appears in exactly one round, no node
// appears twice in a round. n-1 rounds of n/2 pairs for even n; n rounds of
// (n-1)/2 pairs for odd n (each node sits out once). Pure, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gdrbench::controller::schedule {

struct Factorization {
  uint32_t rounds = 0;
  uint32_t pairs_per_round = 0;
  // rounds * pairs_per_round pairs, round-major.
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
};

// n = 0 or 1 gives zero rounds.
Factorization RoundRobin(uint32_t n);

}  // namespace gdrbench::controller::schedule
