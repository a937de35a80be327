#include "controller/schedule/factorization.h"

namespace gdrbench::controller::schedule {

Factorization RoundRobin(uint32_t n) {
  Factorization f;
  if (n < 2) return f;
  // Odd n: add a phantom node m-1; whoever meets it sits the round out.
  const uint32_t m = n % 2 == 0 ? n : n + 1;
  const uint32_t ring = m - 1;  // nodes 0..m-2 rotate, m-1 stays fixed
  f.rounds = ring;
  f.pairs_per_round = n / 2;
  f.pairs.resize(static_cast<size_t>(f.rounds) * f.pairs_per_round);
  auto* out = f.pairs.data();
  for (uint32_t r = 0; r < ring; ++r) {
    // The fixed node meets r; the others pair symmetrically around r.
    if (m - 1 < n) {
      // Alternate the side so each node initiates about half its tests.
      *out++ = r % 2 == 0 ? std::pair<uint32_t, uint32_t>{r, m - 1}
                          : std::pair<uint32_t, uint32_t>{m - 1, r};
    }
    // a = (r + i) mod ring, b = (r - i) mod ring, stepped without divisions.
    uint32_t a = r + 1 == ring ? 0 : r + 1;
    uint32_t b = r == 0 ? ring - 1 : r - 1;
    for (uint32_t i = 1; i < m / 2; ++i) {
      *out++ = {a, b};
      a = a + 1 == ring ? 0 : a + 1;
      b = b == 0 ? ring - 1 : b - 1;
    }
  }
  return f;
}

uint32_t RoundRobinRounds(uint32_t n) { return n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n); }

void RoundRobinRound(uint32_t n, uint32_t r, std::vector<std::pair<uint32_t, uint32_t>>* out) {
  out->clear();
  if (n < 2) return;
  // As RoundRobin's loop body for one r: node m-1 stays fixed, the others
  // sit on a ring of m-1 and pair symmetrically around r.
  const uint32_t m = n % 2 == 0 ? n : n + 1;
  const uint32_t ring = m - 1;
  out->reserve(n / 2);
  if (m - 1 < n) {
    out->push_back(r % 2 == 0 ? std::pair<uint32_t, uint32_t>{r, m - 1}
                              : std::pair<uint32_t, uint32_t>{m - 1, r});
  }
  for (uint32_t i = 1; i < m / 2; ++i) out->emplace_back((r + i) % ring, (r + ring - i) % ring);
}

}  // namespace gdrbench::controller::schedule
