#include "controller/schedule/factorization.h"

namespace gdrbench::controller::schedule {

uint32_t RoundRobinRounds(uint32_t n) { return n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n); }

void RoundRobinRound(uint32_t n, uint32_t r, std::vector<std::pair<uint32_t, uint32_t>>* out) {
  out->clear();
  if (n < 2) return;
  // Odd n: a phantom node m-1; whoever meets it sits the round out. Node
  // m-1 stays fixed and meets r; the others sit on a ring of m-1 and pair
  // symmetrically around r.
  const uint32_t m = n % 2 == 0 ? n : n + 1;
  const uint32_t ring = m - 1;
  out->reserve(n / 2);
  if (m - 1 < n) {
    // Alternate the side so each node initiates about half its tests.
    out->push_back(r % 2 == 0 ? std::pair<uint32_t, uint32_t>{r, m - 1}
                              : std::pair<uint32_t, uint32_t>{m - 1, r});
  }
  for (uint32_t i = 1; i < m / 2; ++i) out->emplace_back((r + i) % ring, (r + ring - i) % ring);
}

Factorization RoundRobin(uint32_t n) {
  Factorization f;
  f.rounds = RoundRobinRounds(n);
  if (f.rounds == 0) return f;
  f.pairs_per_round = n / 2;
  f.pairs.reserve(static_cast<size_t>(f.rounds) * f.pairs_per_round);
  std::vector<std::pair<uint32_t, uint32_t>> round;
  for (uint32_t r = 0; r < f.rounds; ++r) {
    RoundRobinRound(n, r, &round);
    f.pairs.insert(f.pairs.end(), round.begin(), round.end());
  }
  return f;
}

}  // namespace gdrbench::controller::schedule
