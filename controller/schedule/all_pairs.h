// The all-pairs schedule made round by round: its rounds are the round-robin
// 1-factorization's (factorization.h), each replicated over the rail groups
// and, with one direction per sub-round, emitted a->b then b->a, split by the
// cap. Only an index of the rounds is held (which matching, rail group,
// direction and slice of the cap each round is: 20 B a round, 41 KB at
// 1,024 nodes), never the tests (8.4 M tests, 168 MB at 1,024 x 8): a round's
// tests are made when asked for, O(nodes + its tests).
//
// Round r is exactly what the whole-schedule emission gave: for matching m,
// for each rail group g in order, the tests (src, dst, rail) of m's pairs in
// pair order, each pair on the rails of g that both nodes have (in g's
// order), first a->b, then (one direction per sub-round) b->a; a cap
// `max_concurrent` > 0 cuts each such sub-round into rounds of `cap` tests
// (the last one shorter); an empty sub-round is no round.
// Immutable after construction; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

class AllPairsRounds {
 public:
  // `groups`: the rail groups (rails of one group run in one round), each a
  // list of rail indices.
  AllPairsRounds(const std::vector<NodeShape>& nodes, std::vector<std::vector<uint32_t>> groups,
                 bool bidirectional, uint32_t max_concurrent);

  size_t rounds() const { return rounds_.size(); }
  size_t tests() const { return tests_; }
  size_t RoundSize(size_t r) const { return rounds_[r].size; }
  size_t MaxRoundSize() const { return max_round_; }
  // Round r's tests into *out (replaced).
  void Round(size_t r, std::vector<Test>* out) const;

 private:
  struct Ref {
    uint32_t matching = 0;  // the factorization's round
    uint32_t group = 0;     // index into groups_
    uint32_t skip = 0;      // tests of the sub-round before this round (the cap's slices)
    uint32_t size = 0;
    bool reversed = false;  // b->a
  };

  uint32_t n_ = 0;
  std::vector<uint32_t> rails_;  // rail count per node
  std::vector<std::vector<uint32_t>> groups_;
  // below_[g][s]: how many rails of group g are < s (the tests of a pair
  // sharing s rails, in g's sub-round).
  std::vector<std::vector<uint32_t>> below_;
  bool bidirectional_ = false;
  std::vector<Ref> rounds_;
  size_t tests_ = 0;
  size_t max_round_ = 0;
};

}  // namespace gdrbench::controller::schedule
