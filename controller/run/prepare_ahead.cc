#include "controller/run/prepare_ahead.h"

#include <algorithm>
#include <utility>

namespace gdrbench::controller::run {

PrepareAhead::PrepareAhead(PairTester& tester, size_t threads, const CancelToken* cancel)
    : tester_(tester), cancel_(cancel) {
  for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

PrepareAhead::~PrepareAhead() {
  std::shared_ptr<Round> last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    ++generation_;
    last = round_;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
  if (last != nullptr) Release(*last);
}

std::shared_ptr<PrepareAhead::Round> PrepareAhead::Start(std::vector<PairTestSpec> specs) {
  auto round = std::make_shared<Round>(std::move(specs));
  {
    std::lock_guard<std::mutex> lock(mu_);
    round_ = round;
    ++generation_;
  }
  work_cv_.notify_all();
  return round;
}

std::unique_ptr<PreparedTest> PrepareAhead::Take(Round& round, size_t k) {
  std::unique_lock<std::mutex> lock(round.mu_);
  Round::Slot& slot = round.slots_[k];
  // A set-up under way is the test's own: waited for (its RPCs have deadlines).
  if (slot.state == Round::State::kSettingUp) {
    ++round.waiting_;
    round.ready_cv_.wait(lock, [&] { return slot.state != Round::State::kSettingUp; });
    --round.waiting_;
  }
  slot.state = Round::State::kTaken;
  return std::move(slot.prepared);
}

void PrepareAhead::Release(Round& round) {
  std::vector<std::pair<size_t, std::unique_ptr<PreparedTest>>> left;
  {
    std::lock_guard<std::mutex> lock(round.mu_);
    round.released_ = true;
    for (size_t k = 0; k < round.slots_.size(); ++k) {
      Round::Slot& slot = round.slots_[k];
      if (slot.state == Round::State::kSettingUp) continue;  // discarded by its thread when it ends
      if (slot.prepared != nullptr) left.emplace_back(k, std::move(slot.prepared));
      slot.state = Round::State::kTaken;
    }
  }
  for (auto& [k, prepared] : left) tester_.Discard(round.specs_[k], std::move(prepared));
}

void PrepareAhead::Loop() {
  uint64_t seen = 0;
  for (;;) {
    std::shared_ptr<Round> round;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_.load();
      round = round_;
    }
    for (size_t k = round->next_.fetch_add(1); k < round->size(); k = round->next_.fetch_add(1)) {
      // A newer round (or the end: its generation too): this one's remaining
      // tests are set up by their workers.
      if (generation_.load(std::memory_order_acquire) != seen) break;
      if (cancel_ != nullptr && cancel_->cancelled()) break;
      {
        std::lock_guard<std::mutex> lock(round->mu_);
        if (round->released_ || round->slots_[k].state != Round::State::kWaiting) continue;
        round->slots_[k].state = Round::State::kSettingUp;
      }
      std::unique_ptr<PreparedTest> prepared = tester_.Prepare(round->specs_[k]);
      bool discard = false, wake = false;
      {
        std::lock_guard<std::mutex> lock(round->mu_);
        Round::Slot& slot = round->slots_[k];
        discard = round->released_;
        slot.state = discard ? Round::State::kTaken : Round::State::kReady;
        if (!discard) slot.prepared = std::move(prepared);
        wake = round->waiting_ > 0;
      }
      if (wake) round->ready_cv_.notify_all();
      if (discard && prepared != nullptr) tester_.Discard(round->specs_[k], std::move(prepared));
    }
  }
}

}  // namespace gdrbench::controller::run
