// The references a run's cells are judged against at ingest (ingest.h),
// before the run is stored: per link of one (cluster, rail, size), the
// cluster's baseline run's OK reading and its threshold, and the median of
// the link's history (link_noise.h) and its threshold, each computed as
// Ingester::CompareCell computes them. A sweep asks for them
// (Controller.GetLinkReferences) to measure a regressed cell again in the
// same run, so the finding the server makes of it is "confirmed by a retest"
// or disappears.
// Errors: INVALID_ARGUMENT for a bad cluster name; DATA_LOSS for a corrupt
// noise table; the store's otherwise. Thread safety: as the store's.
#pragma once

#include "absl/status/statusor.h"
#include "gdrbench/v1/controller.pb.h"
#include "server/history/ingest.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

absl::StatusOr<v1::LinkReferences> FindLinkReferences(store::Store& store,
                                                      const v1::GetLinkReferencesRequest& req,
                                                      const IngestOptions& options);

}  // namespace gdrbench::server::history
