// An ingest that holds nothing of the store while the client sends (issue
// 31, item 2): StagedRunWriter keeps every RunWriter call in an unlinked
// temporary file (pair chunks compressed as the store keeps them), and only
// Commit opens the store's write transaction (Store::BeginRun, one at a
// time), replays the file into it and commits. A stalled or slow upload
// therefore never delays another upload, a baseline or retention; the
// write lock is held for a replay at local disk speed.
//
// Pair chunks are compressed on threads of their own, at most kCompressAhead
// at a time, while the caller goes on (checking the next chunk, reading it
// from the client): on two cores the zstd of a 1,024 x 8 run's 1.6 GB of
// pairs leaves the upload's critical path. Records keep the order of the
// calls.
//
// Errors: Create: INTERNAL naming the temporary file's errno. Commit:
// ALREADY_EXISTS when the run id was stored meanwhile (as BeginRun), the
// store's errors, DATA_LOSS when the staged file does not read back.
// Nothing reaches the store unless Commit succeeds; the file goes with the
// writer.
// Thread safety: one writer per upload, used from one thread.
#pragma once

#include <cstdio>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace gdrbench::server::store {

class StagedRunWriter final : public RunWriter {
 public:
  // `row` as for Store::BeginRun. `dir`: where the file is made (empty: the
  // system's temporary folder, TMPDIR).
  static absl::StatusOr<std::unique_ptr<StagedRunWriter>> Create(Store& store, RunRow row,
                                                                 const std::string& dir = "");
  ~StagedRunWriter() override;

  int64_t run_key() const override { return 0; }  // known only once committed
  absl::Status AddCell(const CellRecord& cell) override;
  absl::Status AddPairChunk(uint32_t pairs, std::string_view serialized_chunk) override;
  absl::Status AddStoredPairChunk(uint32_t pairs, std::string_view stored_chunk) override;
  absl::Status AddNodeStat(const NodeStatRow& stat) override;
  absl::Status SetCapacity(std::string_view serialized) override;
  absl::Status AddMatrixBlob(uint32_t rail, uint64_t size_bytes, std::string_view blob) override;
  absl::Status SetLinkNoise(const LinkNoiseRow& row) override;
  absl::Status Commit(const RunRow& row, const v1::Run& header) override;
  uint64_t staged_bytes() const { return bytes_; }

 private:
  // kCells: a batch of cells, each as AddCell appends it to cells_.
  enum class Kind : uint8_t { kCells = 1, kPairs, kNodeStat, kCapacity, kBlob, kNoise };
  StagedRunWriter(Store& store, RunRow row, std::FILE* file) : store_(store), row_(std::move(row)), file_(file) {}
  // A record of `kind` (after the cells batched so far).
  absl::Status Put(Kind kind, std::string_view record);
  absl::Status PutCells();  // the batched cells as one record, if any
  absl::Status Write(Kind kind, std::string_view record);
  // Writes the compressed pair chunks in order until at most `keep` are in flight.
  absl::Status PutPairs(size_t keep);
  static constexpr size_t kCompressAhead = 2;
  absl::Status Replay(RunWriter& into);

  Store& store_;
  RunRow row_;
  std::FILE* file_;
  std::string record_;  // reused
  std::string cells_;   // cells not yet written: one record per ~1 MiB
  struct Compressing {
    uint32_t pairs;
    std::future<absl::StatusOr<std::string>> stored;
  };
  std::deque<Compressing> compressing_;  // oldest first
  std::string pair_record_;              // reused by PutPairs
  uint64_t bytes_ = 0;
  bool write_failed_ = false;
};

}  // namespace gdrbench::server::store
