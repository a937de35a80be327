// The store: every run the server keeps, on SQLite (embedded, the default)
// or PostgreSQL, through the one SqlDb seam (sql.h). A run is kept whole but
// in pieces: a header (the v1.Run without pairs and matrix cells), its pair
// results in chunks, and its cells in one block per source node and matrix,
// keyed for per-link and per-node queries (cell_block.h; schema:
// migrations.h). Node names are interned (nodes.id).
//
// Open("PATH") is SQLite (created if missing, WAL); Open("postgresql://...")
// or Open("postgres://...") is PostgreSQL. Both migrate the schema first.
// Thread safety: every method may be called from any thread. Writes (an
// ingest, a baseline, retention) are serialized; reads run beside them on
// their own connections and see the last commit.
// Errors: as SqlDb (sql.h); NOT_FOUND for an unknown run id.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "gdrbench/v1/run.pb.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

// A run's row in `runs` (what lists and summaries need, no blob).
struct RunRow {
  int64_t key = 0;              // runs.id
  std::string run_id;
  std::string cluster;
  int64_t started_us = 0, finished_us = 0, stored_us = 0;
  std::string mode;
  bool passed = false;
  std::string summary;
  uint32_t nodes = 0, rails = 0;
  uint64_t cells = 0, low_cells = 0, failed_cells = 0, pairs = 0;
  uint64_t verdict_cells = 0;   // cells of each rail's verdict (largest) size
  uint32_t baseline_regressions = 0, last_pass_regressions = 0;
  bool is_baseline = false;
};

struct NodeStatRow {
  int64_t node = 0;
  uint32_t rail = 0;
  uint64_t size_bytes = 0;
  uint32_t ok_cells = 0, low_cells = 0, failed_cells = 0;
  double median_gbps = 0, tx_median_gbps = 0, rx_median_gbps = 0;
};

// One matrix's link noise windows (server/history/link_noise.h encodes data).
struct LinkNoiseRow {
  std::string cluster;
  uint32_t rail = 0;
  uint64_t size_bytes = 0;
  int64_t newest_started_us = 0;  // the newest run folded in
  std::string data;
};

// An ingest: one write transaction. Nothing is visible before Commit; the
// destructor rolls back an uncommitted one (a malformed upload leaves the
// store as it was). Store::BeginRun's writer holds the store's write lock
// from start to Commit: uploads stage first (staged_run.h).
class RunWriter {
 public:
  virtual ~RunWriter() = default;
  virtual int64_t run_key() const = 0;
  // cell.run is filled in. A matrix's (rail, size) cells come together, in
  // any order (INVALID_ARGUMENT for a matrix that comes back, ALREADY_EXISTS
  // for a cell twice, found when the matrix ends).
  virtual absl::Status AddCell(const CellRecord& cell) = 0;
  virtual absl::Status AddPairChunk(uint32_t pairs, std::string_view serialized_chunk) = 0;
  // A chunk already compressed as the store keeps it (chunk_codec.h, kZstd).
  virtual absl::Status AddStoredPairChunk(uint32_t pairs, std::string_view stored_chunk) = 0;
  virtual absl::Status AddNodeStat(const NodeStatRow& stat) = 0;
  // The run's capacity statistics (a serialized v1.RunCapacity).
  virtual absl::Status SetCapacity(std::string_view serialized) = 0;
  // The heatmap's binary matrix of one rail and size (report/matrix_blob.h).
  virtual absl::Status AddMatrixBlob(uint32_t rail, uint64_t size_bytes, std::string_view blob) = 0;
  // The link noise windows of (cluster, rail, size) (server/history/link_noise.h),
  // replacing the stored ones unless those came from a run started after
  // `started_us` (then the stored ones stay).
  virtual absl::Status SetLinkNoise(const LinkNoiseRow& row) = 0;
  // Writes the header and the row's counts, then commits.
  virtual absl::Status Commit(const RunRow& row, const v1::Run& header) = 0;
};

struct RunFilter {
  std::string cluster;           // empty = all
  std::optional<bool> passed;
  int64_t since_us = 0;          // started_us >= since (0 = no bound)
  int64_t until_us = 0;          // started_us < until (0 = no bound)
  // Keyset paging: rows strictly after (started_us, key) in newest-first order.
  std::optional<std::pair<int64_t, int64_t>> after;
  uint32_t limit = 50;
};

struct CellQuery {
  int64_t run = 0;
  std::optional<uint32_t> rail;
  uint64_t size_bytes = 0;       // 0 = every size
  int64_t src = -1, dst = -1;    // node ids; -1 = any
  int verdict = -1;              // -1 = any
  // Keyset paging: rows after (rail, size, src, dst).
  std::optional<std::tuple<uint32_t, uint64_t, int64_t, int64_t>> after;
  uint32_t limit = 0;            // 0 = no limit
};

struct LinkPoint {
  std::string run_id;
  int64_t started_us = 0;
  CellRecord cell;
};

struct NodePoint {
  std::string run_id;
  int64_t started_us = 0;
  NodeStatRow stat;
};

struct BaselineRow {
  std::string cluster;
  int64_t run_key = 0;
  int64_t set_us = 0;
  std::string set_by;
};

struct ClusterRow {
  std::string name;
  uint64_t runs = 0;
  std::string last_run_id;
  std::string baseline_run_id;
};

// A live run (issue 30; server/history/live_runs.h): a sweep's finished
// tests, staged while it runs, in chunks without a gap from test 0 on.
struct LiveRunRow {
  std::string run_id;
  std::string cluster;
  std::string opened_by;
  int64_t opened_us = 0, updated_us = 0;
  uint64_t next_test = 0;  // tests stored: 0 .. next_test - 1
  uint64_t cells = 0;
  uint64_t bytes = 0;  // of its chunks' data
  std::string plan;    // a serialized v1.LivePlan
};

struct LiveChunkRow {
  uint64_t first_test = 0;
  uint32_t tests = 0;
  std::string data;  // a serialized v1.LiveChunk (run_id and first_test left out)
};

class Store {
 public:
  using Connector = std::function<absl::StatusOr<std::unique_ptr<SqlDb>>()>;
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& url);
  // Over an explicit connector (tests); migrates.
  static absl::StatusOr<std::unique_ptr<Store>> OpenWith(Connector connector, std::string name);
  ~Store();

  const std::string& name() const { return name_; }
  Dialect dialect() const { return dialect_; }

  // --- nodes
  // The ids of `names`, interning new ones.
  absl::StatusOr<std::vector<int64_t>> InternNodes(const std::vector<std::string>& names);
  // "" for an unknown id.
  std::string NodeName(int64_t id);
  // -1 when the name was never stored.
  absl::StatusOr<int64_t> NodeId(const std::string& name);

  // --- ingest: ALREADY_EXISTS when row.run_id is stored.
  absl::StatusOr<std::unique_ptr<RunWriter>> BeginRun(const RunRow& row);

  // --- runs
  absl::StatusOr<std::optional<RunRow>> FindRun(const std::string& run_id);
  absl::StatusOr<std::optional<RunRow>> FindRunByKey(int64_t key);
  absl::StatusOr<v1::Run> ReadHeader(int64_t run_key);
  absl::Status ReadPairChunks(int64_t run_key, const std::function<absl::Status(std::string)>& fn);
  absl::StatusOr<std::vector<RunRow>> ListRuns(const RunFilter& filter);
  // The newest passing run of `cluster` started before `before_us`.
  absl::StatusOr<std::optional<RunRow>> LastPassingBefore(const std::string& cluster,
                                                          int64_t before_us);
  // The newest run of each cluster.
  absl::StatusOr<std::vector<RunRow>> LatestRuns();
  absl::StatusOr<std::vector<ClusterRow>> Clusters();

  // --- cells (ordered by rail, size, src, dst)
  absl::Status ReadCells(const CellQuery& q, const std::function<absl::Status(const CellRecord&)>& fn);
  absl::StatusOr<std::vector<NodeStatRow>> ReadNodeStats(int64_t run_key);
  // A run's serialized v1.RunCapacity; nullopt for a run stored before the
  // server kept them (schema version 1).
  absl::StatusOr<std::optional<std::string>> ReadCapacity(int64_t run_key);
  // The matrix blob stored at ingest for (rail, size); nullopt where none was
  // (other sizes than the verdict size, runs stored before schema version 3).
  absl::StatusOr<std::optional<std::string>> ReadMatrixBlob(int64_t run_key, uint32_t rail, uint64_t size_bytes);
  // The link noise windows of (cluster, rail, size); nullopt when none are kept.
  absl::StatusOr<std::optional<LinkNoiseRow>> ReadLinkNoise(const std::string& cluster, uint32_t rail,
                                                           uint64_t size_bytes);

  // --- trends: newest first, at most `limit`, started at or after since_us.
  // size_bytes 0 = each run's verdict size of the rail.
  absl::StatusOr<std::vector<LinkPoint>> LinkTrend(const std::string& cluster, int64_t src,
                                                   int64_t dst, uint32_t rail, uint64_t size_bytes,
                                                   int64_t since_us, uint32_t limit);
  absl::StatusOr<std::vector<NodePoint>> NodeTrend(const std::string& cluster, int64_t node,
                                                   std::optional<uint32_t> rail, int64_t since_us,
                                                   uint32_t limit);

  // --- baselines
  absl::Status SetBaseline(const std::string& cluster, int64_t run_key, const std::string& by);
  absl::StatusOr<std::optional<BaselineRow>> GetBaseline(const std::string& cluster);

  // --- retention: deletes runs started before `cutoff_us` except baselines.
  absl::StatusOr<uint64_t> DeleteRunsBefore(int64_t cutoff_us);

  // --- live runs (store_live.cc). Each write is its own transaction, durable
  // when it returns.
  // Creates the live run, or returns the one stored with this id (whatever
  // `row` says). When `max_open` live runs are open, those last updated
  // before `stale_before_us` are deleted first (their ids go to `*dropped`);
  // RESOURCE_EXHAUSTED when that leaves no room.
  absl::StatusOr<LiveRunRow> OpenLiveRun(const LiveRunRow& row, uint32_t max_open, int64_t stale_before_us,
                                         std::vector<std::string>* dropped);
  absl::StatusOr<std::optional<LiveRunRow>> FindLiveRun(const std::string& run_id);
  // Oldest first.
  absl::StatusOr<std::vector<LiveRunRow>> ListLiveRuns();
  // Stores the chunk when `first_test` is the run's next_test (then next_test
  // grows by `tests`); anything else is left alone. Returns next_test after.
  // NOT_FOUND for a live run that is not open.
  absl::StatusOr<uint64_t> AppendLiveChunk(const std::string& run_id, uint64_t first_test, uint32_t tests,
                                           uint64_t cells, std::string_view data);
  // The chunks holding tests from `from_test` on, in order, at most `limit`.
  absl::Status ReadLiveChunks(const std::string& run_id, uint64_t from_test, uint32_t limit,
                              const std::function<absl::Status(const LiveChunkRow&)>& fn);
  // Deletes the live run and its chunks; false when none was open.
  absl::StatusOr<bool> DeleteLiveRun(const std::string& run_id);

 private:
  // A pooled connection, handed back when the lease ends.
  class Lease {
   public:
    Lease(Store* s, std::unique_ptr<SqlDb> db) : s_(s), db_(std::move(db)) {}
    Lease(Lease&& o) noexcept = default;
    ~Lease() {
      if (db_) s_->Release(std::move(db_));
    }
    SqlDb& operator*() { return *db_; }
    SqlDb* operator->() { return db_.get(); }

   private:
    Store* s_;
    std::unique_ptr<SqlDb> db_;
  };
  class Writer;
  Store(Connector connector, std::string name, Dialect dialect);
  absl::StatusOr<Lease> Acquire();
  void Release(std::unique_ptr<SqlDb> db);
  absl::Status LoadNodes(SqlDb& db);
  absl::Status ReadCellsOfMatrix(const CellQuery& q, const std::vector<int64_t>& sources,
                                 const std::function<absl::Status(const CellRecord&)>& fn);
  // The blocks' part of ReadCellsOfMatrix (cell_block.h); at most `limit` cells (0: all).
  absl::Status ReadBlocksOfMatrix(SqlDb& db, const CellQuery& q, const std::vector<int64_t>& sources,
                                  uint32_t limit, const std::function<absl::Status(const CellRecord&)>& fn);
  absl::StatusOr<std::vector<LinkPoint>> LinkTrendOfBlocks(SqlDb& db, const std::string& cluster, int64_t src,
                                                           int64_t dst, uint32_t rail, uint64_t size_bytes,
                                                           int64_t since_us, uint32_t limit);

  Connector connector_;
  std::string name_;
  Dialect dialect_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<SqlDb>> idle_;
  std::mutex write_mu_;  // one write transaction at a time
  std::mutex nodes_mu_;
  std::unordered_map<std::string, int64_t> node_ids_;
  std::unordered_map<int64_t, std::string> node_names_;
};

int64_t ToMicros(const google::protobuf::Timestamp& t);
google::protobuf::Timestamp FromMicros(int64_t us);
int64_t NowMicros();

}  // namespace gdrbench::server::store
