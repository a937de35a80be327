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

// Every round at once (RoundRobinRound's, in order). n = 0 or 1 gives zero
// rounds.
Factorization RoundRobin(uint32_t n);

// The factorization one round at a time (the all-pairs schedule at 1,024
// nodes makes its rounds as it runs them, never all at once).
// RoundRobinRounds: n-1 for even n, n for odd n, 0 for n < 2.
uint32_t RoundRobinRounds(uint32_t n);
// Round r (r < RoundRobinRounds(n)) into *out (replaced): its n/2 pairs,
// the fixed node's side alternating with r. Round r pairs the nodes a != b with a + b = 2r (mod m-1), m = n
// rounded up to even; node r meets node m-1 (odd n: sits the round out). O(n).
void RoundRobinRound(uint32_t n, uint32_t r, std::vector<std::pair<uint32_t, uint32_t>>* out);

}  // namespace gdrbench::controller::schedule
