// Ingest: one run, in the pieces of UploadRun (v1.RunChunk: header, then
// cells and pairs), validated, staged as it arrives (store/staged_run.h: a
// temporary file, nothing of the store held) and written to the store in
// one transaction at Finish, with per-node statistics, capacity statistics
// (capacity.h) and regressions (against the cluster's baseline and against
// each link's own history, link_noise.h) computed on the way and kept in the
// stored run's header, and each verdict matrix's link noise windows updated
// with the run's passing readings (in the same transaction). Each finding's
// streak counts the cluster's consecutive runs, this one included, that made
// the same finding (kind and subject); so does each blame's (the controller's
// blames: any streak an upload carries is replaced). Nothing is stored unless Finish succeeds; a stalled upload holds
// no lock another upload needs.
//
// Memory is bounded by one matrix, not by the run: cells go to the staging
// file as they arrive; a verdict matrix (each rail's largest size) keeps one
// float per cell for its node medians and the two reference runs' cells of
// that matrix for the comparison, plus the matrix's link noise windows
// (link_noise.h), until its last chunk; pairs are staged
// chunk by chunk. A matrix's cells must therefore arrive in consecutive
// chunks.
//
// Idempotent by run id: when the run is stored already with the same
// content, Begin says so and every later call is accepted and ignored.
// The same content is the same header (every field but the server's
// regressions) and, at Finish, as many cells and pairs; otherwise the id
// was reused for another run: ALREADY_EXISTS naming the id and when the
// first was stored (Begin for a different header, Finish for other counts).
// Errors: INVALID_ARGUMENT with a sentence naming the chunk and the field;
// the store's errors otherwise.
// Thread safety: one Ingester per upload, used from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gdrbench/v1/controller.pb.h"
#include "server/history/capacity.h"
#include "server/history/link_noise.h"
#include "server/history/node_stats.h"
#include "server/history/pair_check.h"
#include "server/history/regressions.h"
#include "server/store/store.h"

namespace gdrbench::server::history {

struct IngestOptions {
  double tolerance = 0.05;          // regressions: a drop past this fraction
  NoisePolicy noise;                // ... or past k x the link's own noise, when larger
  size_t max_regression_links = 1000;
  uint32_t max_nodes = 16384;       // per matrix
  uint32_t max_matrices = 4096;
  uint64_t max_cells = 64ull << 20;
  uint64_t max_pairs = 64ull << 20;
  size_t capacity_weakest = 32;     // weakest cells kept per rail for the capacity report
  std::string staging_dir;          // an upload's staging file (staged_run.h); empty: TMPDIR
};

class Ingester {
 public:
  Ingester(store::Store& store, IngestOptions options);
  ~Ingester();

  // The first chunk. OK with already_stored() when the run id is stored.
  absl::Status Begin(v1::Run header);
  absl::Status Add(const v1::RunChunk& chunk);
  // A pair chunk as received: `chunk` the serialized v1.PairChunk of a
  // RunChunk's `pairs`, parsed and checked (pair_check.h: as Add checks a
  // parsed one) and staged as it came, compressed: no re-serialization.
  // The same errors as Add.
  absl::Status AddSerializedPairs(absl::string_view chunk);
  absl::StatusOr<v1::UploadRunResponse> Finish();
  bool already_stored() const { return already_stored_; }

 private:
  struct MatrixState;
  struct Reference {
    v1::RegressionReference kind;
    std::optional<store::RunRow> run;
    std::unique_ptr<RegressionBuilder> builder;
  };
  absl::Status AddCells(const v1::MatrixCells& cells);
  // A checked chunk of `n` pairs staged as `serialized`.
  absl::Status StagePairs(uint32_t n, absl::string_view serialized);
  // Add's and AddSerializedPairs's common start (nullopt: go on) and end.
  std::optional<absl::Status> Admit(uint64_t cells, const std::function<absl::StatusOr<uint64_t>()>& pairs);
  absl::Status Named(absl::Status st);
  absl::Status OpenMatrix(MatrixState& m);
  absl::Status CloseMatrix(MatrixState& m);
  absl::Status Fail(absl::Status st);
  // The run is stored: the same content (already_stored_) or ALREADY_EXISTS.
  absl::Status SameAsStored(const store::RunRow& stored);
  // Per verdict cell: the comparisons with each reference and the link's
  // noise window.
  void CompareCell(MatrixState& m, const v1::MatrixCell& c, int64_t src, int64_t dst, CellVerdict verdict,
                   double* baseline);
  // Each finding's streak, from the cluster's run before this one.
  absl::Status SetStreaks();

  store::Store& store_;
  IngestOptions options_;
  v1::Run header_;
  bool begun_ = false, already_stored_ = false, failed_ = false;
  std::unique_ptr<store::RunWriter> writer_;
  std::vector<std::unique_ptr<MatrixState>> matrices_;
  std::map<std::pair<uint32_t, uint64_t>, MatrixState*> by_key_;
  MatrixState* open_ = nullptr;
  std::vector<Reference> references_;
  std::optional<store::RunRow> stored_;  // already stored: its row, to compare counts at Finish
  uint64_t chunks_ = 0, cells_ = 0, pairs_ = 0, low_ = 0, failed_cells_ = 0, verdict_cells_ = 0;
  std::vector<store::NodeStatRow> node_stats_;
  v1::RunCapacity capacity_;
  PairChunkCheck pair_check_;  // received pair chunks parsed into its arena
};

// The checks of a header alone (also used before a server-run sweep is
// stored). INVALID_ARGUMENT with a sentence.
absl::Status ValidateHeader(const v1::Run& header, const IngestOptions& options);

}  // namespace gdrbench::server::history
