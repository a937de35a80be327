#include "controller/schedule/all_pairs.h"

#include <algorithm>
#include <utility>

#include "controller/schedule/factorization.h"

namespace gdrbench::controller::schedule {

AllPairsRounds::AllPairsRounds(const std::vector<NodeShape>& nodes, std::vector<std::vector<uint32_t>> groups,
                               bool bidirectional, uint32_t max_concurrent)
    : n_(static_cast<uint32_t>(nodes.size())), groups_(std::move(groups)), bidirectional_(bidirectional) {
  rails_.reserve(nodes.size());
  size_t max_rails = 0;
  for (const auto& nd : nodes) {
    rails_.push_back(static_cast<uint32_t>(nd.rail_gpu.size()));
    max_rails = std::max(max_rails, nd.rail_gpu.size());
  }
  below_.assign(groups_.size(), std::vector<uint32_t>(max_rails + 1, 0));
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t s = 1; s <= max_rails; ++s) {
      below_[g][s] = static_cast<uint32_t>(
          std::count_if(groups_[g].begin(), groups_[g].end(), [s](uint32_t r) { return r < s; }));
    }
  }
  const uint32_t directions = bidirectional ? 1 : 2;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t m = 0; m < RoundRobinRounds(n_); ++m) {
    RoundRobinRound(n_, m, &pairs);
    for (uint32_t g = 0; g < groups_.size(); ++g) {
      uint64_t count = 0;  // the sub-round's tests, the same both ways
      for (const auto& [a, b] : pairs) count += below_[g][std::min(rails_[a], rails_[b])];
      for (uint32_t d = 0; d < directions; ++d) {
        const uint64_t slice = max_concurrent > 0 ? max_concurrent : std::max<uint64_t>(count, 1);
        for (uint64_t skip = 0; skip < count; skip += slice) {
          const uint32_t size = static_cast<uint32_t>(std::min(slice, count - skip));
          rounds_.push_back(Ref{m, g, static_cast<uint32_t>(skip), size, d == 1});
          max_round_ = std::max<size_t>(max_round_, size);
        }
        tests_ += count;
      }
    }
  }
  rounds_.shrink_to_fit();
}

void AllPairsRounds::Round(size_t r, std::vector<Test>* out) const {
  const Ref& ref = rounds_[r];
  out->clear();
  out->reserve(ref.size);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  RoundRobinRound(n_, ref.matching, &pairs);
  const std::vector<uint32_t>& group = groups_[ref.group];
  uint32_t skip = ref.skip;
  for (const auto& [a, b] : pairs) {
    const uint32_t src = ref.reversed ? b : a, dst = ref.reversed ? a : b;
    const uint32_t shared = std::min(rails_[src], rails_[dst]);
    if (const uint32_t k = below_[ref.group][shared]; skip >= k) {  // a pair wholly in earlier slices
      skip -= k;
      continue;
    }
    for (uint32_t rail : group) {
      if (rail >= shared) continue;
      if (skip > 0) {
        --skip;
        continue;
      }
      out->push_back(Test{src, dst, rail, bidirectional_});
      if (out->size() == ref.size) return;
    }
  }
}

}  // namespace gdrbench::controller::schedule
