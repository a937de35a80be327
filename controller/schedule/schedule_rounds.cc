// Schedule's rounds, stored or generated (all_pairs.h).
#include <algorithm>

#include "controller/schedule/all_pairs.h"
#include "controller/schedule/schedule.h"

namespace gdrbench::controller::schedule {

Schedule::Schedule(std::shared_ptr<const AllPairsRounds> generated) : generated_(std::move(generated)) {}

size_t Schedule::rounds() const {
  if (generated_ != nullptr) return generated_->rounds();
  return round_begin_.empty() ? 0 : round_begin_.size() - 1;
}

size_t Schedule::tests() const { return generated_ != nullptr ? generated_->tests() : tests_.size(); }

size_t Schedule::RoundSize(size_t r) const {
  if (generated_ != nullptr) return generated_->RoundSize(r);
  return round_begin_[r + 1] - round_begin_[r];
}

void Schedule::RoundInto(size_t r, std::vector<Test>* out) const {
  if (generated_ != nullptr) {
    generated_->Round(r, out);
    return;
  }
  out->assign(tests_.begin() + static_cast<ptrdiff_t>(round_begin_[r]),
              tests_.begin() + static_cast<ptrdiff_t>(round_begin_[r + 1]));
}

std::vector<Test> Schedule::Round(size_t r) const {
  std::vector<Test> out;
  RoundInto(r, &out);
  return out;
}

size_t Schedule::MaxRoundSize() const {
  if (generated_ != nullptr) return generated_->MaxRoundSize();
  size_t m = 0;
  for (size_t r = 0; r < rounds(); ++r) m = std::max(m, RoundSize(r));
  return m;
}

std::vector<Test> Schedule::AllTests() const {
  if (generated_ == nullptr) return tests_;
  std::vector<Test> all;
  all.reserve(tests());
  ForEachTest([&all](const Test& t) { all.push_back(t); });
  return all;
}

}  // namespace gdrbench::controller::schedule
