// PrepareAhead: the set-up of tests (PairTester::Prepare: for the agents'
// tester, OpenTarget) done on threads of its own ahead of the workers that
// run them, so a round's wall time approaches its data time.
//
// Exclusivity: only set-up runs ahead, never a data phase (RunWriteSweep);
// the rounds' data phases still run one round after another. The set-up of
// round r+1 starts when round r's tests start and a round's slots are
// released (Release) before round r+2's set-up starts, so a NIC (in at most
// one test of a round) holds at most two targets at once: the one of the test
// moving data on it and the one prepared for its next test.
//
// Bounded by a window, not by a round: of each round, at most `window` tests
// are set up ahead of those its workers have taken (Take). Round r+1's first
// `window` are ready when it starts, and while its first tests move data its
// later ones are set up, `window` ahead. So what is held open ahead (targets,
// held initiators, the agents' buffers and threads) is at most 2 x `window`
// tests whatever a round's size: a quick round of 1,024 nodes x 8 rails is
// 4,096 tests, and opening them all ahead held 4,096 targets open for the
// length of a round. The round being run comes first: a thread sets up the
// next round only when this one's window is full.
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

  // `threads` >= 1 set up tests concurrently, at most `window` (0 counts as
  // 1) of a round ahead of its taken tests; `cancel` (may be null): no
  // set-up starts once raised.
  PrepareAhead(PairTester& tester, size_t threads, size_t window, const CancelToken* cancel);
  ~PrepareAhead();  // releases the rounds not released, joins the threads

  // Starts setting up `specs` (the tests of the next round, in the order the
  // runner indexes them and its workers take them) once the round before,
  // if still running, has its window set up. The returned round is given to
  // Take and Release.
  std::shared_ptr<Round> Start(std::vector<PairTestSpec> specs);
  // Test k of `round` (see above).
  std::unique_ptr<PreparedTest> Take(Round& round, size_t k);
  // Discards what was set up for `round` and not taken; a set-up still under
  // way is discarded when it ends. No slot of the round can be taken after.
  void Release(Round& round);

  // The most tests set up ahead and not yet taken or discarded at once
  // (their set-up under way or done), over all rounds.
  size_t most_ahead() const;

 private:
  void Loop();
  // The slot to set up next (the oldest round first), marked as under way;
  // false when none may start now. Under mu_.
  bool NextSlot(std::shared_ptr<Round>* round, size_t* k);

  PairTester& tester_;
  const size_t window_;
  const CancelToken* cancel_;
  mutable std::mutex mu_;                       // guards what follows and every Round's state
  std::condition_variable work_cv_;             // a slot may start, or stop
  std::condition_variable ready_cv_;            // a set-up ended
  std::vector<std::shared_ptr<Round>> rounds_;  // started, not released; oldest first
  size_t ahead_ = 0;                            // set up or under way, not taken or discarded
  size_t most_ahead_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started after everything they read
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

  // All guarded by PrepareAhead::mu_.
  const std::vector<PairTestSpec> specs_;
  std::vector<Slot> slots_;
  size_t next_ = 0;   // slots before it are under way, set up or taken
  size_t taken_ = 0;  // slots taken (Take)
  bool released_ = false;
};

}  // namespace gdrbench::controller::run
