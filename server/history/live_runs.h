// Live runs (issue 30, item 3): a `gdrbench sweep --server` streams its
// finished tests while it runs, so an in-progress run's cells can be seen
// as they land, and a break (server restart, network cut, controller crash
// and --resume) loses nothing.
//
// The protocol (proto/gdrbench/v1/controller.proto, OpenLiveRun ...):
//   * Open: the controller opens the run at the sweep's start with its plan
//     (node names, rails, sizes). Opening an open run again answers where it
//     stands (next_test): that is how a client resumes.
//   * Append: chunks of the journal's test records in journal order, each
//     naming the index of its first test. The server keeps the tests without
//     a gap and acknowledges next_test (the tests 0 .. next_test - 1 it has),
//     committed to the store before it answers. A chunk that starts at or
//     before next_test is stored from next_test on (a resend changes
//     nothing: idempotent); one that starts beyond it is a gap and is not
//     stored (the client resends from next_test). The client therefore
//     resumes from its journal at next_test, never from memory.
//   * Close: the final run is uploaded with UploadRun as before; its ingest
//     alone makes the stored run (identical to an upload without a live
//     run), and once it is stored the live run is deleted (Close). A live
//     run whose sweep never closed it stays OPEN: ListLiveRuns shows it with
//     its last update, and Abandon (DELETE /api/v1/live-runs/ID) clears it;
//     at the limit, one silent for `stale_after` makes room for a new one.
// Limits (a client with a write token cannot exhaust the server): at most
// `max_open` live runs open, `max_tests_per_chunk` tests a chunk, the plan's
// nodes, rails and sizes as an upload's (IngestOptions), and `max_cells`
// cells and `max_bytes` bytes per live run: at most max_open x max_bytes of
// the store (8 GiB by default) for a client with a write token.
// Errors: INVALID_ARGUMENT with a sentence naming the field; NOT_FOUND for
// an unknown run id; RESOURCE_EXHAUSTED past a limit; FAILED_PRECONDITION
// for an open run id whose plan differs; the store's otherwise.
// Thread safety: every method may be called from any thread (the state is
// the store's).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gdrbench/v1/live.pb.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

struct LiveOptions {
  uint32_t max_open = 8;  // live runs open at once
  uint32_t max_tests_per_chunk = 16384;
  uint32_t max_nodes = 16384;
  uint32_t max_rails = 64;
  uint32_t max_sizes = 64;
  uint64_t max_cells = 64ull << 20;  // per live run
  uint64_t max_bytes = 1ull << 30;   // of a live run's chunks (1,024 x 8, two sizes: about 0.4 GB)
  uint32_t max_cells_page = 10000;   // tests per ListLiveCells page at most
  // At max_open, the live runs nothing was sent to for this long are dropped
  // to make room (logged): their sweeps died, and a resumed one opens its run
  // again and resends it from its journal. Nightly sweeps that crash can then
  // not keep every later sweep's live view out.
  absl::Duration stale_after = absl::Hours(24);
};

class LiveRuns {
 public:
  LiveRuns(store::Store& store, LiveOptions options) : store_(store), options_(options) {}

  absl::StatusOr<v1::LiveRun> Open(const v1::OpenLiveRunRequest& req, const std::string& who);
  absl::StatusOr<v1::LiveAck> Append(const v1::LiveChunk& chunk);
  absl::StatusOr<v1::LiveRun> Get(const std::string& run_id);
  absl::StatusOr<v1::ListLiveRunsResponse> List();
  absl::StatusOr<v1::ListLiveCellsResponse> Cells(const v1::ListLiveCellsRequest& req);
  // Deletes an open live run and its cells; NOT_FOUND when none is open.
  absl::StatusOr<v1::LiveRun> Abandon(const std::string& run_id);
  // The final run `run_id` is stored: its live run (if any) goes.
  absl::Status Close(const std::string& run_id);

 private:
  absl::Status CheckPlan(const v1::LivePlan& plan) const;
  absl::Status CheckTest(const v1::LiveTest& t, const v1::LivePlan& plan, size_t index) const;
  v1::LiveRun ToLiveRun(const store::LiveRunRow& row) const;
  // STORED when the run is in the store, else NOT_FOUND naming it.
  absl::StatusOr<v1::LiveRun> StoredOrMissing(const std::string& run_id);

  store::Store& store_;
  LiveOptions options_;
};

}  // namespace gdrbench::server::history
