// The Controller API as a plain C++ interface (no gRPC, no HTTP): each call
// takes its v1 request and the caller, validates the request and returns the
// v1 response or a status. grpc_service.h and http_server.h only convert.
// Limits and defaults are in HandlerOptions.
// Errors: INVALID_ARGUMENT with a sentence for bad input; NOT_FOUND for
// unknown runs, clusters and jobs; FAILED_PRECONDITION for a run too big to
// return whole; the store's otherwise.
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gdrbench/v1/capacity.pb.h"
#include "gdrbench/v1/controller.pb.h"
#include "server/api/auth.h"
#include "server/history/ingest.h"
#include "server/history/live_runs.h"
#include "server/history/names.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_manager.h"

namespace gdrbench::server::api {

struct HandlerOptions {
  history::IngestOptions ingest;     // tolerance, limits
  uint64_t max_full_cells = 1 << 20; // GetRun FULL refuses bigger runs
  history::LiveOptions live;         // live runs' limits (max_nodes, max_cells: ingest's)
};

class Handler {
 public:
  Handler(store::Store& store, sweeps::SweepManager& sweeps, HandlerOptions options);

  std::unique_ptr<history::Ingester> NewUpload();
  // An upload's end: ingest->Finish(), and once the run is stored its live
  // run (if any) is closed (handler_live.cc).
  absl::StatusOr<v1::UploadRunResponse> FinishUpload(history::Ingester& ingest);
  // A whole run at once (HTTP JSON upload, server-run sweeps).
  absl::StatusOr<v1::UploadRunResponse> StoreRun(const v1::Run& run);

  // Live runs (history/live_runs.h).
  absl::StatusOr<v1::LiveRun> OpenLiveRun(const v1::OpenLiveRunRequest& req, const Principal& who);
  absl::StatusOr<v1::LiveAck> AppendLiveRun(const v1::LiveChunk& chunk);
  absl::StatusOr<v1::LiveRun> GetLiveRun(const v1::GetLiveRunRequest& req);
  absl::StatusOr<v1::ListLiveRunsResponse> ListLiveRuns(const v1::ListLiveRunsRequest& req);
  absl::StatusOr<v1::ListLiveCellsResponse> ListLiveCells(const v1::ListLiveCellsRequest& req);
  absl::StatusOr<v1::LiveRun> AbandonLiveRun(const v1::AbandonLiveRunRequest& req);

  absl::StatusOr<v1::Run> GetRun(const v1::GetRunRequest& req);
  absl::Status ExportRun(const v1::ExportRunRequest& req,
                         const std::function<absl::Status(const v1::RunChunk&)>& fn);
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req);
  absl::StatusOr<v1::ListCellsResponse> ListCells(const v1::ListCellsRequest& req);
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(const v1::CompareRunsRequest& req);
  absl::StatusOr<v1::TrendResponse> GetLinkTrend(const v1::LinkTrendRequest& req);
  absl::StatusOr<v1::TrendResponse> GetNodeTrend(const v1::NodeTrendRequest& req);
  absl::StatusOr<v1::BaselineInfo> SetBaseline(const v1::SetBaselineRequest& req, const Principal& who);
  absl::StatusOr<v1::BaselineInfo> GetBaseline(const v1::GetBaselineRequest& req);
  absl::StatusOr<v1::LinkReferences> GetLinkReferences(const v1::GetLinkReferencesRequest& req);
  absl::StatusOr<v1::ListClustersResponse> ListClusters(const v1::ListClustersRequest& req);
  absl::StatusOr<v1::CapacityReport> GetCapacityReport(const v1::GetCapacityReportRequest& req);

  absl::StatusOr<v1::SweepJob> SubmitSweep(const v1::SubmitSweepRequest& req, const Principal& who);
  absl::StatusOr<v1::SweepJob> GetSweep(const v1::GetSweepRequest& req);
  absl::StatusOr<v1::ListSweepsResponse> ListSweeps(const v1::ListSweepsRequest& req);
  absl::StatusOr<v1::SweepJob> CancelSweep(const v1::CancelSweepRequest& req);
  // `still_wanted`: asked while the job does not change (SweepManager::Watch).
  absl::Status WatchSweep(const v1::WatchSweepRequest& req,
                          const std::function<bool(const v1::SweepJob&)>& fn,
                          const std::function<bool()>& still_wanted);

  store::Store& store() { return store_; }
  sweeps::SweepManager& sweeps() { return sweeps_; }
  const HandlerOptions& options() const { return options_; }

  // SIGTERM: from now on the front ends refuse new uploads (UNAVAILABLE
  // "shutting down", DrainRefusal) while those in flight finish.
  void StartDraining() { draining_ = true; }
  // OK, or the UNAVAILABLE a new upload gets while the server drains.
  absl::Status DrainRefusal() const;

 private:
  absl::StatusOr<store::RunRow> Run(const std::string& run_id, const char* field);
  store::Store& store_;
  sweeps::SweepManager& sweeps_;
  HandlerOptions options_;
  history::LiveRuns live_;
  std::atomic<bool> draining_{false};
};

// Request checks, one sentence each (tested on their own). Ids and names
// follow the rules ingest applies (server/history/names.h).
using history::CheckRunId;
using history::CheckClusterName;
absl::Status CheckPageSize(uint32_t page_size, uint32_t max, const char* field);
// Page tokens this server issued: "t<started_us>.<key>" (runs), "c<rail>.<size>.<src>.<dst>"
// (cells), "o<offset>" (compare).
absl::StatusOr<std::pair<int64_t, int64_t>> ParseRunsToken(const std::string& token);
absl::StatusOr<std::tuple<uint32_t, uint64_t, int64_t, int64_t>> ParseCellsToken(const std::string& token);
absl::StatusOr<uint64_t> ParseOffsetToken(const std::string& token);
v1::RunSummary ToSummary(const store::RunRow& r);

}  // namespace gdrbench::server::api
