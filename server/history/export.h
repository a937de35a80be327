// A stored run read back: in pieces (ExportRun, the chunks UploadRun takes,
// any size), or whole (AssembleRun, for runs up to a cell limit).
// Errors: the store's; FAILED_PRECONDITION when a run is too big to assemble.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "gdrbench/v1/controller.pb.h"
#include "server/history/ingest.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

absl::Status ExportRun(store::Store& store, const store::RunRow& run,
                       const std::function<absl::Status(const v1::RunChunk&)>& fn);

absl::StatusOr<v1::Run> AssembleRun(store::Store& store, const store::RunRow& run,
                                    uint64_t max_cells);

// Uploads a whole in-memory run through an Ingester (what the HTTP JSON
// upload and the tests do).
absl::StatusOr<v1::UploadRunResponse> StoreRun(store::Store& store, const v1::Run& run,
                                               const IngestOptions& options);

}  // namespace gdrbench::server::history
