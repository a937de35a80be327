// PrepareAhead: the set-up of the next round's tests (PairTester::Prepare:
// for the agents' tester, OpenTarget) done on threads of its own while this
// round's data moves, so a round's wall time approaches its data time.
//
// Exclusivity: only set-up runs ahead, never a data phase (RunWriteSweep);
// the rounds' data phases still run one round after another. The set-up of
// round r+1 starts when round r's tests start and a round's slots are
// released (Release) before round r+2's set-up starts, so a NIC (in at most
// one test of a round) holds at most two targets at once: the one of the test
// moving data on it and the one prepared for its next test.
//
// A test's slot is taken once by the worker about to run it (Take): what was
// prepared, after waiting for a set-up under way, or null when its set-up had
// not started (it will not start then; the worker runs the test whole). A
// slot never taken (a cancelled sweep, a run ended by an error) is released:
// what was prepared for it goes to PairTester::Discard (the agents' targets
// closed), also for a set-up that ends after the release.
// Thread safety: Start, Release and the destructor from the runner's thread;
// Take from the workers, concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/run/cancel.h"
#include "controller/run/pair_tester.h"

namespace gdrbench::controller::run {

class PrepareAhead {
 public:
  // One round's tests to set up ahead.
  class Round;

  // `threads` >= 1 set up tests concurrently; `cancel` (may be null): no
  // set-up starts once raised.
  PrepareAhead(PairTester& tester, size_t threads, const CancelToken* cancel);
  ~PrepareAhead();  // releases the round being prepared, joins the threads

  // Starts setting up `specs` (the tests of the next round, in the order the
  // runner indexes them); the threads leave the round before it (what they
  // have started finishes). The returned round is given to Take and Release.
  std::shared_ptr<Round> Start(std::vector<PairTestSpec> specs);
  // Test k of `round` (see above).
  std::unique_ptr<PreparedTest> Take(Round& round, size_t k);
  // Discards what was set up for `round` and not taken; a set-up still under
  // way is discarded when it ends. No slot of the round can be taken after.
  void Release(Round& round);

 private:
  void Loop();

  PairTester& tester_;
  const CancelToken* cancel_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::shared_ptr<Round> round_;         // the round being set up; guarded by mu_
  std::atomic<uint64_t> generation_{0};  // written under mu_
  bool stop_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;     // last: started after everything they read
};

class PrepareAhead::Round {
 public:
  explicit Round(std::vector<PairTestSpec> specs) : specs_(std::move(specs)), slots_(specs_.size()) {}
  size_t size() const { return specs_.size(); }

 private:
  friend class PrepareAhead;
  enum class State { kWaiting, kSettingUp, kReady, kTaken };
  struct Slot {
    State state = State::kWaiting;
    std::unique_ptr<PreparedTest> prepared;
  };

  const std::vector<PairTestSpec> specs_;
  std::vector<Slot> slots_;      // guarded by mu_
  std::atomic<size_t> next_{0};  // the next slot a thread tries
  bool released_ = false;        // guarded by mu_
  size_t waiting_ = 0;           // Takes waiting for a set-up; guarded by mu_
  std::mutex mu_;
  std::condition_variable ready_cv_;
};

}  // namespace gdrbench::controller::run
