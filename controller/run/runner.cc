#include "controller/run/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/run/prepare_ahead.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::run {
namespace {

// A fixed set of threads that run one batch of indices at a time; the
// calling thread works too. Batches are rounds: RunBatch returns when every
// index of the round has finished.
class BatchPool {
 public:
  explicit BatchPool(size_t threads) {
    for (size_t i = 1; i < threads; ++i) workers_.emplace_back([this, i] { Loop(i); });
  }
  ~BatchPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  size_t threads() const { return workers_.size() + 1; }

  // fn(index, worker): worker 0 is the calling thread, 1.. the pool's.
  void RunBatch(size_t count, const std::function<void(size_t, size_t)>& fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      count_ = count;
      // Indices are taken a chunk at a time when a batch is much larger than
      // the pool (the controller bench: 4096 zero-time tests a round on two
      // threads, where taking them one by one passed the counter's cache
      // line between the cores every test); a worker is then at most a
      // 64th of its share behind the others at the end of the batch. A pool
      // as large as the round (a real sweep's) takes one at a time.
      chunk_ = std::max<size_t>(1, count / (threads() * 64));
      next_.store(0);
      busy_ = workers_.size();
      ++generation_;
    }
    cv_.notify_all();
    Drain(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void Drain(size_t worker) {
    for (size_t i = next_.fetch_add(chunk_); i < count_; i = next_.fetch_add(chunk_)) {
      for (size_t end = std::min(i + chunk_, count_); i < end; ++i) (*fn_)(i, worker);
    }
  }
  void Loop(size_t worker) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      Drain(worker);
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  size_t busy_ = 0;
  const std::function<void(size_t, size_t)>* fn_ = nullptr;
  size_t count_ = 0;
  size_t chunk_ = 1;
  std::atomic<size_t> next_{0};
};

// Drops what one attempt wrote, keeping the identity (endpoints, rail, round).
void ClearOutcome(v1::PairResult* r) {
  r->clear_status();
  r->clear_reason();
  r->clear_sizes();
  r->clear_reverse_sizes();
  r->clear_summary();
  r->clear_started_at();
  r->clear_duration_ns();
  r->clear_memory_halves();
  r->clear_gpu_host_ratio();
  r->clear_staged_host_ratio();
  for (v1::Endpoint* e : {r->mutable_src(), r->mutable_dst()}) {
    e->clear_memory_kind();
    e->clear_registration();
  }
}

}  // namespace

std::string TestKey(uint32_t round, const std::string& src, const std::string& dst, uint32_t rail,
                    uint32_t dst_rail) {
  if (dst_rail == rail) return absl::StrCat(round, "|", src, "|", dst, "|", rail);
  return absl::StrCat(round, "|", src, "|", dst, "|", rail, ">", dst_rail);
}

std::string TestKey(const v1::PairResult& r) {
  return TestKey(r.round(), r.src().node(), r.dst().node(), r.rail(), r.has_dst_rail() ? r.dst_rail() : r.rail());
}

namespace {

// A worker's finished results not yet handed to on_result, and the messages
// its tests write into (reused test after test, ReadyForNextTest: the
// endpoints and their strings stay allocated).
struct WorkerResults {
  std::vector<std::unique_ptr<v1::PairResult>> slots;
  std::vector<schedule::Test> tests;  // slots[i]'s test
  size_t pending = 0;  // slots[0, pending) wait for on_result
};

// At most this many results wait in a worker (then it blocks on the lock).
constexpr size_t kMaxPending = 64;
// Results of tests shorter than kQuickTestNs are handed over kQuickBatch at a
// time: taking the lock passes its cache line between the cores, which for
// a zero-time test (the controller bench's fakes) costs as much as the
// test. A real test (milliseconds and more) is handed over at once.
constexpr size_t kQuickBatch = 16;
constexpr int64_t kQuickTestNs = 1'000'000;

}  // namespace

bool DoneTests::Key(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail,
                    uint64_t* key) const {
  if (src >= nodes_ || dst >= nodes_ || rail >= rails_ || dst_rail >= rails_) return false;
  // Mixed radix, the round the most significant digit.
  unsigned __int128 k = round;
  k = ((k * nodes_ + src) * nodes_ + dst) * rails_ * rails_ + rail * rails_ + dst_rail;
  if (k > UINT64_MAX) return false;
  *key = static_cast<uint64_t>(k);
  return true;
}

absl::Status DoneTests::Add(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) {
  uint64_t key = 0;
  if (!Key(round, src, dst, rail, dst_rail, &key)) {
    return absl::OutOfRangeError(absl::StrCat("finished test of round ", round, ", node ", src, " -> ", dst,
                                              ", rail ", rail, " -> ", dst_rail, ": outside a plan of ", nodes_,
                                              " nodes and ", rails_, " rails (or its round past a 64-bit key)"));
  }
  keys_.push_back(key);
  sealed_ = false;
  return absl::OkStatus();
}

void DoneTests::Seal() {
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  keys_.shrink_to_fit();
  sealed_ = true;
}

bool DoneTests::Contains(uint32_t round, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) const {
  uint64_t key = 0;
  if (!sealed_ || !Key(round, src, dst, rail, dst_rail, &key)) return false;
  return std::binary_search(keys_.begin(), keys_.end(), key);
}

namespace {

// What the rounds' workers share: progress, the first error, the handover of
// results to on_result. Count and Deliver are called with `mu` held.
struct RunShared {
  explicit RunShared(const RunnerOptions& o) : options(o) {}

  const RunnerOptions& options;
  std::mutex mu;  // serializes on_result, progress and `first_error`
  absl::Status first_error;
  Progress prog;
  size_t ran = 0;
  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  // Counts a finished test and reports progress.
  void Count(const v1::PairResult& result) {
    ++prog.tests_done;
    ++ran;
    if (result.status() != v1::RESULT_STATUS_OK) ++prog.tests_bad;
    if (options.on_progress) {
      prog.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      size_t left = prog.tests_total - prog.tests_done;
      prog.eta_s = prog.elapsed_s / static_cast<double>(ran) * static_cast<double>(left);
      options.on_progress(prog);
    }
  }

  // Hands a worker's pending results to on_result.
  void Deliver(WorkerResults& w) {
    for (size_t i = 0; i < w.pending; ++i) {
      const v1::PairResult& result = *w.slots[i];
      if (options.on_result) {
        absl::Status st = options.on_result(result, w.tests[i]);
        if (!st.ok() && first_error.ok()) first_error = st;
      }
      Count(result);
    }
    w.pending = 0;
  }
};

// The indices of the round's tests to run (resumed tests are not run); how
// many were resumed into `resumed`.
std::vector<uint32_t> TestsToRun(std::span<const schedule::Test> tests, uint32_t round,
                                 const DoneTests& already_done, size_t* resumed) {
  std::vector<uint32_t> to_run;
  to_run.reserve(tests.size());
  *resumed = 0;
  for (uint32_t i = 0; i < tests.size(); ++i) {
    const auto& t = tests[i];
    if (!already_done.empty() && already_done.Contains(round, t.src, t.dst, t.rail, t.TargetRail())) {
      ++*resumed;
      continue;
    }
    to_run.push_back(i);
  }
  return to_run;
}

// Runs one test into `result` (its identity already filled), retrying a
// failed one up to `retries` times; a test with a node left out is skipped.
// `prepared` (may be null): the first attempt's set-up, done ahead.
void RunWithRetries(const Plan& plan, PairTester& tester, uint32_t retries, PairTestSpec& spec,
                    std::unique_ptr<PreparedTest> prepared, v1::PairResult& result) {
  const auto& t = spec.test;
  const PlanNode* excluded = plan.nodes[t.src].excluded   ? &plan.nodes[t.src]
                             : plan.nodes[t.dst].excluded ? &plan.nodes[t.dst]
                                                          : nullptr;
  if (excluded != nullptr) {
    if (prepared != nullptr) tester.Discard(spec, std::move(prepared));
    result.set_status(v1::RESULT_STATUS_SKIPPED);
    result.set_reason(absl::StrCat(excluded->name, " left out: ", excluded->excluded_reason));
    return;
  }
  uint32_t attempts = 0;
  for (;;) {
    ++attempts;
    spec.attempt = attempts;
    if (attempts == 1 && prepared != nullptr) {
      tester.RunPrepared(spec, std::move(prepared), &result);
    } else {
      tester.Run(spec, &result);
    }
    if (result.status() == v1::RESULT_STATUS_OK || attempts > retries) break;
    spdlog::info("retrying {}->{} rail {}{}: {}", result.src().node(), result.dst().node(), t.rail,
                 t.CrossRail() ? absl::StrCat("->", t.TargetRail()) : "", result.reason());
    RecycleResult(&result);
    ClearOutcome(&result);
  }
  result.set_attempts(attempts);
}

// The worker's next free result slot (for `t`).
v1::PairResult& NextSlot(WorkerResults& w, const schedule::Test& t) {
  if (w.slots.size() == w.pending) {
    w.slots.push_back(std::make_unique<v1::PairResult>());
    w.tests.emplace_back();
  }
  w.tests[w.pending] = t;
  return *w.slots[w.pending];
}

// Queues the worker's finished result (its slot's) and hands the queue over
// when it should be.
void HandOver(RunShared& shared, WorkerResults& w, const v1::PairResult& result) {
  // A real test's result is handed over at once when the lock is free, a
  // sub-millisecond one's kQuickBatch at a time; queued when the other
  // worker holds the lock (a contended mutex's sleep and wake-up cost
  // more than a zero-time test: a fifth of the controller bench's
  // samples), and handed over with this worker's next results or at the
  // round's end.
  ++w.pending;
  if (w.pending < kQuickBatch && result.duration_ns() < kQuickTestNs) return;
  if (w.pending < kMaxPending && !shared.mu.try_lock()) return;
  if (w.pending == kMaxPending) shared.mu.lock();
  std::lock_guard<std::mutex> lock(shared.mu, std::adopt_lock);
  shared.Deliver(w);
}

}  // namespace

absl::Status SweepRunner::Run(const DoneTests& already_done) {
  if (!already_done.empty() && !already_done.sealed()) {
    return absl::FailedPreconditionError("the finished tests of a resume were not sealed (DoneTests::Seal)");
  }
  const auto& sched = plan_.schedule;
  // Every schedule that runs is checked: no NIC and no GPU in two tests of a
  // round (incast: but a target's, shared by its fan-in senders).
  if (absl::Status valid = schedule::ValidateSchedule(sched, Shapes(plan_.nodes, plan_.memory),
                                                      schedule::MaxFanIn(plan_.schedule_options));
      !valid.ok()) {
    return valid;
  }
  const CancelToken* cancel = options_.cancel;
  auto cancelled = [cancel] { return cancel != nullptr && cancel->cancelled(); };
  size_t max_round = sched.MaxRoundSize();
  size_t threads = std::max<size_t>(1, std::min<size_t>(options_.parallelism, max_round));
  BatchPool pool(threads);
  std::vector<WorkerResults> workers(pool.threads());

  RunShared shared(options_);
  Progress& prog = shared.prog;
  prog.tests_total = sched.tests();
  prog.rounds = sched.rounds();

  // The set-up ahead (PrepareAhead): this round's later tests and the next
  // round's first, a window of `threads` tests of each; `ahead` is the round
  // whose set-up started during the round before.
  std::optional<PrepareAhead> prepare;
  if (options_.prepare_next_round) prepare.emplace(tester_, threads, threads, cancel);
  auto round_of = [&](size_t r) { return static_cast<uint32_t>(r) + options_.round_offset; };
  auto specs_of = [&](size_t r, const std::vector<schedule::Test>& tests,
                      const std::vector<uint32_t>& to_run) {
    std::vector<PairTestSpec> specs;
    specs.reserve(to_run.size());
    for (uint32_t i : to_run) specs.push_back(PairTestSpec{&plan_, tests[i], round_of(r)});
    return specs;
  };
  // At most two rounds' tests are held: this one and the next (set up
  // ahead); a generated schedule (all-pairs) makes each as it comes.
  std::vector<schedule::Test> tests, next_tests;
  size_t resumed = 0;
  std::vector<uint32_t> to_run;
  if (sched.rounds() > 0) {
    sched.RoundInto(0, &tests);
    to_run = TestsToRun(tests, round_of(0), already_done, &resumed);
  }
  std::shared_ptr<PrepareAhead::Round> ahead;

  for (size_t r = 0; r < sched.rounds(); ++r) {
    prog.round = r;
    const uint32_t round = round_of(r);
    prog.tests_done += resumed;
    prog.tests_resumed += resumed;
    std::shared_ptr<PrepareAhead::Round> current = std::move(ahead);
    std::vector<uint32_t> next_to_run;
    size_t next_resumed = 0;
    next_tests.clear();
    if (r + 1 < sched.rounds()) {
      sched.RoundInto(r + 1, &next_tests);
      next_to_run = TestsToRun(next_tests, round_of(r + 1), already_done, &next_resumed);
    }
    if (to_run.empty() || cancelled()) {
      if (current != nullptr) prepare->Release(*current);
      if (!to_run.empty()) break;  // cancelled
      to_run = std::move(next_to_run);
      resumed = next_resumed;
      tests.swap(next_tests);
      continue;
    }
    // The next round's set-up starts as this round's tests do.
    if (prepare.has_value() && !next_to_run.empty())
      ahead = prepare->Start(specs_of(r + 1, next_tests, next_to_run));
    pool.RunBatch(to_run.size(), [&](size_t k, size_t worker) {
      if (cancelled()) return;  // not started: a resume runs it (its set-up is released below)
      PairTestSpec spec{&plan_, tests[to_run[k]], round};
      const auto& t = spec.test;
      WorkerResults& w = workers[worker];
      v1::PairResult& result = NextSlot(w, t);
      ReadyForNextTest(&result);
      FillIdentity(spec, &result);
      std::unique_ptr<PreparedTest> prepared = current != nullptr ? prepare->Take(*current, k) : nullptr;
      RunWithRetries(plan_, tester_, options_.retries, spec, std::move(prepared), result);
      absl::Status concurrent = options_.on_result_concurrent ? options_.on_result_concurrent(result, t)
                                                              : absl::OkStatus();
      if (!concurrent.ok()) {
        // Not recorded (the journal failed): counted, not handed over.
        std::lock_guard<std::mutex> lock(shared.mu);
        if (shared.first_error.ok()) shared.first_error = concurrent;
        shared.Count(result);
        return;
      }
      HandOver(shared, w, result);
    });
    if (current != nullptr) prepare->Release(*current);
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      for (auto& w : workers) shared.Deliver(w);
    }
    if (!shared.first_error.ok()) return shared.first_error;  // `prepare` releases `ahead`
    to_run = std::move(next_to_run);
    resumed = next_resumed;
    tests.swap(next_tests);
  }
  if (cancelled()) {
    return absl::CancelledError(absl::StrCat("cancelled after ", prog.tests_done, " of ",
                                             prog.tests_total, " tests"));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::run
