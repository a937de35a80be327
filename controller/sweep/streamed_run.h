// A finished sweep held in memory bounded by a round, not by the run: the
// run's header (everything but its pairs and its matrices' cells), the
// compact matrices (analysis::MatrixSet, 20 B a cell) and the journal the
// pairs were written to. run.json and the upload's chunks are rendered from
// them piece by piece, with the same bytes and the same chunks as the whole
// v1::Run the in-memory path builds (RunSweep): at 1,024 nodes x 8 rails the
// whole run is 8.4 M MatrixCell and 8.4 M PairResult messages, gigabytes
// before the first byte is written.
//
//   absl::StatusOr<sweep::StreamedRun> run = sweep::RunSweepStreamed(config, hooks);
//   std::ofstream out(dir + "/run.json");
//   GDR_RETURN_IF_ERROR(run->WriteJson(out));
//   server->Upload([&](const auto& fn) { return run->ForEachRunChunk({}, fn); });
//
// Pairs come back from the journal in its order: the order the tests were
// journaled in (with config.parallel > 1 records of different workers may
// interleave differently from the order the runner handed them to the
// matrices; with one worker the orders are the same).
// Thread safety: const methods may run concurrently; each reads the journal
// through its own file handle.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "gdrbench/v1/controller.pb.h"
#include "gdrbench/v1/run.pb.h"
#include "report/run_chunks.h"

namespace gdrbench::controller::sweep {

class StreamedRun {
 public:
  // The whole run in memory (the in-memory path: a run without a journal,
  // an incast run or a --memory list, whose analysis reads every pair).
  static StreamedRun Whole(v1::Run run);
  // `header`: the run without pairs, its matrices without cells, in the
  // order of matrices->matrices(). `journal_path` empty or `with_pairs`
  // false: the run has no pairs (SweepConfig::keep_pairs false). `policy`
  // sets each streamed pair's link_flag (analysis::LinkFlag).
  static StreamedRun FromJournal(v1::Run header, std::shared_ptr<analysis::MatrixSet> matrices,
                                 std::string journal_path, bool with_pairs, v1::VerdictPolicy policy);

  // False: the whole run is held (Whole).
  bool streamed() const { return streamed_; }
  // The run without pairs and matrix cells (report::RunHeader's shape) when
  // streamed, else the whole run. Callers may set fields of it (cluster,
  // regressions, blame streaks after an upload): they are rendered.
  const v1::Run& header() const { return run_; }
  v1::Run* mutable_header() { return &run_; }
  size_t cells() const;

  // Each matrix's cells in chunks of at most `max_cells`, matrix by matrix
  // (index into header().matrices()), ToProto's order. An error `fn`
  // returns stops it and is returned.
  absl::Status ForEachCellChunk(
      size_t max_cells,
      const std::function<absl::Status(size_t matrix,
                                       const google::protobuf::RepeatedPtrField<v1::MatrixCell>&)>& fn) const;
  // The pairs in chunks of at most `max_pairs`, read back from the journal
  // (link_flag set). Errors: the journal's (run::StreamJournal), or `fn`'s.
  absl::Status ForEachPairChunk(
      size_t max_pairs,
      const std::function<absl::Status(const google::protobuf::RepeatedPtrField<v1::PairResult>&)>& fn) const;
  // The chunks report::ForEachRunChunk makes of the whole run, the same
  // messages in the same order.
  absl::Status ForEachRunChunk(const gdrbench::report::ChunkSizes& sizes,
                               const std::function<absl::Status(const v1::RunChunk&)>& fn) const;
  // The bytes report::RenderJson renders of the whole run, written as they
  // are rendered. INTERNAL when json_util fails or `out` fails (the caller
  // names the file).
  absl::Status WriteJson(std::ostream& out) const;
  // The whole v1::Run (for reports that need every cell and pair: small
  // runs only, it is what streaming avoids).
  absl::StatusOr<v1::Run> Materialize() const;
  // The pieces WriteJson and Materialize render at a time (default:
  // report::ChunkSizes, about 0.5 MB of cells, 1024 pairs).
  void set_chunk_sizes(const gdrbench::report::ChunkSizes& sizes) { chunks_ = sizes; }

 private:
  bool streamed_ = false;
  v1::Run run_;
  std::shared_ptr<analysis::MatrixSet> matrices_;
  std::string journal_path_;
  bool with_pairs_ = false;
  v1::VerdictPolicy policy_;
  gdrbench::report::ChunkSizes chunks_;
};

}  // namespace gdrbench::controller::sweep
