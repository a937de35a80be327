#include "controller/run/prepare_ahead.h"

#include <algorithm>
#include <utility>

namespace gdrbench::controller::run {

PrepareAhead::PrepareAhead(PairTester& tester, size_t threads, size_t window, const CancelToken* cancel)
    : tester_(tester), window_(std::max<size_t>(1, window)), cancel_(cancel) {
  for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

PrepareAhead::~PrepareAhead() {
  std::vector<std::shared_ptr<Round>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    left = rounds_;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto& round : left) Release(*round);
}

std::shared_ptr<PrepareAhead::Round> PrepareAhead::Start(std::vector<PairTestSpec> specs) {
  auto round = std::make_shared<Round>(std::move(specs));
  {
    std::lock_guard<std::mutex> lock(mu_);
    rounds_.push_back(round);
  }
  work_cv_.notify_all();
  return round;
}

std::unique_ptr<PreparedTest> PrepareAhead::Take(Round& round, size_t k) {
  std::unique_ptr<PreparedTest> prepared;
  {
    std::unique_lock<std::mutex> lock(mu_);
    Round::Slot& slot = round.slots_[k];
    // A set-up under way is the test's own: waited for (its RPCs have deadlines).
    ready_cv_.wait(lock, [&] { return slot.state != Round::State::kSettingUp; });
    if (slot.state == Round::State::kReady) --ahead_;
    slot.state = Round::State::kTaken;
    ++round.taken_;
    prepared = std::move(slot.prepared);
  }
  work_cv_.notify_one();  // the round's window moved by one
  return prepared;
}

void PrepareAhead::Release(Round& round) {
  std::vector<std::pair<size_t, std::unique_ptr<PreparedTest>>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    round.released_ = true;
    for (size_t k = 0; k < round.slots_.size(); ++k) {
      Round::Slot& slot = round.slots_[k];
      if (slot.state == Round::State::kSettingUp) continue;  // discarded by its thread when it ends
      if (slot.state == Round::State::kReady) --ahead_;
      if (slot.prepared != nullptr) left.emplace_back(k, std::move(slot.prepared));
      slot.state = Round::State::kTaken;
    }
    rounds_.erase(std::remove_if(rounds_.begin(), rounds_.end(),
                                 [&](const std::shared_ptr<Round>& r) { return r.get() == &round; }),
                  rounds_.end());
  }
  for (auto& [k, prepared] : left) tester_.Discard(round.specs_[k], std::move(prepared));
}

size_t PrepareAhead::most_ahead() const {
  std::lock_guard<std::mutex> lock(mu_);
  return most_ahead_;
}

bool PrepareAhead::NextSlot(std::shared_ptr<Round>* round, size_t* k) {
  if (cancel_ != nullptr && cancel_->cancelled()) return false;
  for (const auto& r : rounds_) {
    while (r->next_ < r->slots_.size() && r->slots_[r->next_].state != Round::State::kWaiting) ++r->next_;
    if (r->next_ >= r->slots_.size() || r->next_ >= r->taken_ + window_) continue;
    *round = r;
    *k = r->next_++;
    r->slots_[*k].state = Round::State::kSettingUp;
    most_ahead_ = std::max(most_ahead_, ++ahead_);
    return true;
  }
  return false;
}

void PrepareAhead::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::shared_ptr<Round> round;
    size_t k = 0;
    work_cv_.wait(lock, [&] { return stop_ || NextSlot(&round, &k); });
    if (stop_) return;
    lock.unlock();
    std::unique_ptr<PreparedTest> prepared = tester_.Prepare(round->specs_[k]);
    lock.lock();
    Round::Slot& slot = round->slots_[k];
    const bool discard = round->released_;
    if (discard) {
      slot.state = Round::State::kTaken;
      --ahead_;
    } else {
      slot.state = Round::State::kReady;
      slot.prepared = std::move(prepared);
    }
    ready_cv_.notify_all();
    if (discard && prepared != nullptr) {
      lock.unlock();
      tester_.Discard(round->specs_[k], std::move(prepared));
      lock.lock();
    }
  }
}

}  // namespace gdrbench::controller::run
