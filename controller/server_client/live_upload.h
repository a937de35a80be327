// A sweep's finished tests sent to gdrbench-server while it runs (issue 30,
// item 3; the protocol: server/history/live_runs.h). The uploader tails the
// sweep's journal (journal_tail.h) on a thread of its own: it opens the live
// run once the journal's header and plan are written, then sends the test
// records in chunks (at most max_tests_per_chunk, at least every `interval`
// while tests finish), numbered by their place in the journal.
//
//   LiveUploader live(api, journal_path, options);
//   hooks.on_result = [&](const v1::PairResult&) { live.Notify(); };
//   ... RunSweep ...
//   LiveUploadReport r = live.Finish(std::chrono::seconds(10));
//   ... then the final UploadRun, which closes the live run on the server.
//
// The sweep never waits for it: Notify only sets a flag, and the journal is
// the queue (bounded memory: one chunk). When a call fails (server down or
// restarting, network cut), the uploader retries with a growing pause;
// before it sends again it opens the run again, which answers the server's
// next_test, and it reads the journal from there: nothing is sent from
// memory, and a resend of what the server has changes nothing. A
// controller that crashed and runs `gdrbench sweep --resume` does the same
// from its journal. What could not be sent is in the report at the end
// (no silent loss); the final upload carries the whole run either way.
// Errors the server gives for the data itself (INVALID_ARGUMENT,
// RESOURCE_EXHAUSTED, FAILED_PRECONDITION, PERMISSION_DENIED,
// UNAUTHENTICATED) stop the live upload; the report says why.
// Thread safety: Notify from any thread; Finish and SendAvailable from one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "controller/server_client/journal_tail.h"
#include "controller/server_client/server_client.h"
#include "gdrbench/v1/live.pb.h"

namespace gdrbench::controller {

// The calls a live upload makes: ServerClient's over gRPC (LiveApiOf), or
// the server's handler in tests.
class LiveApi {
 public:
  virtual ~LiveApi() = default;
  virtual absl::StatusOr<v1::LiveRun> OpenLiveRun(const v1::OpenLiveRunRequest& req) = 0;
  virtual absl::StatusOr<v1::LiveAck> AppendLiveRun(const v1::LiveChunk& chunk) = 0;
};
std::unique_ptr<LiveApi> LiveApiOf(ServerClient& client);

struct LiveUploadOptions {
  std::string cluster;                       // the run's cluster on the server; empty: "default"
  size_t max_tests_per_chunk = 4096;         // fewer when the tests have many sizes (about 1 MB a chunk)
  std::chrono::milliseconds interval{1000};  // a chunk at least this often while tests finish
  std::chrono::milliseconds retry{1000};     // the first pause after a failed call (doubling, up to 30 s)
  bool start_thread = true;                  // false: the caller calls SendAvailable (tests)
};

struct LiveUploadReport {
  std::string run_id;
  uint64_t tests_in_journal = 0;  // test records read (after Finish: all the journal's)
  uint64_t tests_acked = 0;       // the server's next_test at the end
  bool stored = false;            // the server has the run stored already
  absl::Status error;             // the last failure; OK when none
  bool complete() const { return stored || (error.ok() && tests_acked == tests_in_journal); }
  // One line: "live upload of run R: 812 of 1000 tests read from the
  // journal are on the server; last failure: ...".
  std::string Describe() const;
};

class LiveUploader {
 public:
  LiveUploader(LiveApi& api, std::string journal_path, LiveUploadOptions options);
  ~LiveUploader();  // stops the thread

  // A test was journaled: never blocks.
  void Notify();
  // The journal is complete (the sweep returned): sends the rest, retrying
  // until `deadline` has passed, and stops the thread.
  LiveUploadReport Finish(std::chrono::milliseconds deadline);

  // One pass: opens (or re-opens after a failure) the live run, then sends
  // what the journal holds until its end. UNAVAILABLE while the journal has
  // no header yet; the failed call's status otherwise.
  absl::Status SendAvailable();
  LiveUploadReport Report() const;

 private:
  absl::Status Resync();  // OpenLiveRun: where the server is; the journal read from there
  void Loop();
  static bool Permanent(const absl::Status& st);

  LiveApi& api_;
  JournalTail tail_;
  LiveUploadOptions options_;
  bool synced_ = false;  // the tail is at the server's next_test
  bool done_ = false;    // stored, or a permanent error
  uint64_t acked_ = 0;
  size_t per_chunk_ = 1;  // tests per chunk, set from the plan's sizes
  absl::Status error_;
  bool stored_ = false;

  std::atomic<uint64_t> notified_{0};
  mutable std::mutex mu_;  // guards the fields above against Report() from another thread
  std::condition_variable cv_;
  bool stop_ = false;                                // mu_
  std::chrono::steady_clock::time_point finish_by_;  // mu_, when stop_
  std::thread thread_;
};

}  // namespace gdrbench::controller
