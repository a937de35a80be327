// Handler: live runs (history/live_runs.h) and the close of one by its
// final upload.
#include "server/api/handler.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

absl::StatusOr<v1::UploadRunResponse> Handler::FinishUpload(history::Ingester& ingest) {
  absl::StatusOr<v1::UploadRunResponse> r = ingest.Finish();
  if (!r.ok()) return r;
  // The run is stored: what its live run staged is no longer needed. A
  // failure here leaves the live run listed (an operator abandons it); the
  // upload itself succeeded.
  if (absl::Status st = live_.Close(r->run_id()); !st.ok()) {
    spdlog::warn("run {} is stored, but its live run was not closed: {}", r->run_id(),
                 std::string(st.message()));
  }
  return r;
}

absl::StatusOr<v1::LiveRun> Handler::OpenLiveRun(const v1::OpenLiveRunRequest& req, const Principal& who) {
  if (absl::Status st = DrainRefusal(); !st.ok()) return st;
  return live_.Open(req, who.name);
}

absl::StatusOr<v1::LiveAck> Handler::AppendLiveRun(const v1::LiveChunk& chunk) {
  if (absl::Status st = DrainRefusal(); !st.ok()) return st;
  return live_.Append(chunk);
}

absl::StatusOr<v1::LiveRun> Handler::GetLiveRun(const v1::GetLiveRunRequest& req) {
  return live_.Get(req.run_id());
}

absl::StatusOr<v1::ListLiveRunsResponse> Handler::ListLiveRuns(const v1::ListLiveRunsRequest&) {
  return live_.List();
}

absl::StatusOr<v1::ListLiveCellsResponse> Handler::ListLiveCells(const v1::ListLiveCellsRequest& req) {
  return live_.Cells(req);
}

absl::StatusOr<v1::LiveRun> Handler::AbandonLiveRun(const v1::AbandonLiveRunRequest& req) {
  absl::StatusOr<v1::LiveRun> r = live_.Abandon(req.run_id());
  if (r.ok()) spdlog::info("live run {} abandoned ({} tests staged)", req.run_id(), r->next_test());
  return r;
}

}  // namespace gdrbench::server::api
