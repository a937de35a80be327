#include "server/store/store.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/store/cell_block.h"
#include "server/store/chunk_codec.h"
#include "server/store/migrations.h"
#include "server/store/postgres_db.h"
#include "server/store/sqlite_db.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::store {

int64_t ToMicros(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1000000 + t.nanos() / 1000;
}

google::protobuf::Timestamp FromMicros(int64_t us) {
  google::protobuf::Timestamp t;
  t.set_seconds(us / 1000000);
  t.set_nanos(static_cast<int32_t>(us % 1000000) * 1000);
  return t;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Store::Writer final : public RunWriter {
 public:
  Writer(Store* s, Lease lease, std::unique_lock<std::mutex> lock, int64_t key)
      : s_(s), db_(std::move(lease)), lock_(std::move(lock)), key_(key) {}
  ~Writer() override {
    sink_.reset();  // ends a bulk load before the rollback
    if (!committed_) db_->Rollback();
  }
  int64_t run_key() const override { return key_; }

  absl::Status AddCell(const CellRecord& cell) override {
    if (!matrix_ || matrix_->first != cell.rail || matrix_->second != cell.size_bytes) {
      GDR_RETURN_IF_ERROR(EndCells());
      if (!written_.insert({cell.rail, cell.size_bytes}).second) {
        return absl::InvalidArgumentError(absl::StrCat("cells of rail ", cell.rail, " size ", cell.size_bytes,
                                                       " B came after another matrix's: a matrix's cells are "
                                                       "written together"));
      }
      matrix_.emplace(cell.rail, cell.size_bytes);
    }
    pending_.push_back({cell.src,
                        {cell.dst,
                         cell.status,
                         cell.verdict,
                         cell.bw_avg_gbps,
                         cell.expected_gbps,
                         cell.baseline_gbps,
                         {}}});
    if (!cell.reason.empty()) {
      reason_at_.push_back({pending_.size() - 1, reasons_.size(), cell.reason.size()});
      reasons_.append(cell.reason);
    }
    return absl::OkStatus();
  }

  absl::Status AddPairChunk(uint32_t pairs, std::string_view chunk) override {
    GDR_ASSIGN_OR_RETURN(std::string stored, CompressChunk(chunk));
    return AddStoredPairChunk(pairs, stored);
  }

  absl::Status AddStoredPairChunk(uint32_t pairs, std::string_view stored) override {
    GDR_RETURN_IF_ERROR(EndCells());
    static constexpr BulkColumn kCols[] = {{"run", ColumnType::kInt64},
                                           {"chunk", ColumnType::kInt32},
                                           {"pair_count", ColumnType::kInt32},
                                           {"data", ColumnType::kBytes},
                                           {"encoding", ColumnType::kInt16}};
    return Bulk(
        "run_pairs", kCols,
        {key_, int64_t{chunks_++}, int64_t{pairs}, Blob{stored}, static_cast<int64_t>(ChunkEncoding::kZstd)});
  }

  absl::Status AddNodeStat(const NodeStatRow& n) override {
    GDR_RETURN_IF_ERROR(EndCells());
    static constexpr BulkColumn kCols[] = {{"run", ColumnType::kInt64},
                                           {"node", ColumnType::kInt64},
                                           {"rail", ColumnType::kInt32},
                                           {"size_bytes", ColumnType::kInt64},
                                           {"ok_cells", ColumnType::kInt32},
                                           {"low_cells", ColumnType::kInt32},
                                           {"failed_cells", ColumnType::kInt32},
                                           {"median_gbps", ColumnType::kFloat64},
                                           {"tx_median_gbps", ColumnType::kFloat64},
                                           {"rx_median_gbps", ColumnType::kFloat64}};
    return Bulk(
        "node_stats", kCols,
        {key_, n.node, int64_t{n.rail}, static_cast<int64_t>(n.size_bytes), int64_t{n.ok_cells},
         int64_t{n.low_cells}, int64_t{n.failed_cells}, n.median_gbps, n.tx_median_gbps, n.rx_median_gbps});
  }

  absl::Status SetCapacity(std::string_view serialized) override {
    GDR_RETURN_IF_ERROR(EndWrites());
    return db_->Exec("INSERT INTO run_capacity (run, data) VALUES (?, ?)", {key_, Blob{serialized}});
  }

  absl::Status AddMatrixBlob(uint32_t rail, uint64_t size_bytes, std::string_view blob) override {
    GDR_RETURN_IF_ERROR(EndWrites());
    return db_->Exec("INSERT INTO run_matrix_blobs (run, rail, size_bytes, data) VALUES (?, ?, ?, ?)",
                     {key_, int64_t{rail}, static_cast<int64_t>(size_bytes), Blob{blob}});
  }

  absl::Status SetLinkNoise(const LinkNoiseRow& n) override {
    GDR_RETURN_IF_ERROR(EndWrites());
    // An upsert both dialects read the same way; an older run keeps the newer windows.
    return db_->Exec(
        "INSERT INTO link_noise (cluster, rail, size_bytes, newest_started_us, data) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (cluster, rail, size_bytes) DO UPDATE SET newest_started_us = excluded.newest_started_us, "
        "data = excluded.data WHERE link_noise.newest_started_us <= excluded.newest_started_us",
        {std::string_view(n.cluster), int64_t{n.rail}, static_cast<int64_t>(n.size_bytes), n.newest_started_us,
         Blob{n.data}});
  }

  absl::Status Commit(const RunRow& r, const v1::Run& header) override {
    GDR_RETURN_IF_ERROR(EndWrites());
    std::string blob;
    if (!header.SerializeToString(&blob)) return absl::InternalError("cannot serialize the run header");
    GDR_RETURN_IF_ERROR(db_->Exec(
        "UPDATE runs SET passed = ?, summary = ?, node_count = ?, rail_count = ?, cell_count = ?, "
        "low_cells = ?, failed_cells = ?, pair_count = ?, baseline_regressions = ?, "
        "last_pass_regressions = ?, verdict_cells = ?, header = ? WHERE id = ?",
        {int64_t{r.passed}, std::string_view(r.summary), int64_t{r.nodes}, int64_t{r.rails},
         static_cast<int64_t>(r.cells), static_cast<int64_t>(r.low_cells),
         static_cast<int64_t>(r.failed_cells), static_cast<int64_t>(r.pairs), int64_t{r.baseline_regressions},
         int64_t{r.last_pass_regressions}, static_cast<int64_t>(r.verdict_cells), Blob{blob}, key_}));
    GDR_RETURN_IF_ERROR(db_->Commit());
    committed_ = true;
    return absl::OkStatus();
  }

 private:
  // The open matrix's cells as blocks (cell_block.h): one row per source,
  // its cells in destination order. Cells usually arrive in that order
  // already; otherwise they are sorted here.
  absl::Status EndCells() {
    if (!matrix_) return absl::OkStatus();
    const auto [rail, size] = *matrix_;
    matrix_.reset();
    for (const auto& r : reason_at_) {
      pending_[r.cell].second.reason = std::string_view(reasons_).substr(r.offset, r.bytes);
    }
    auto key = [](const std::pair<int64_t, BlockCell>& c) { return std::make_pair(c.first, c.second.dst); };
    if (!std::is_sorted(pending_.begin(), pending_.end(),
                        [&](const auto& a, const auto& b) { return key(a) < key(b); })) {
      std::stable_sort(pending_.begin(), pending_.end(),
                       [&](const auto& a, const auto& b) { return key(a) < key(b); });
    }
    for (size_t i = 1; i < pending_.size(); ++i) {
      if (key(pending_[i - 1]) == key(pending_[i])) {
        return absl::AlreadyExistsError(absl::StrCat(db_->name(), ": the cell of rail ", rail, " size ", size,
                                                     " B from node #", pending_[i].first, " to node #",
                                                     pending_[i].second.dst, " was written twice"));
      }
    }
    // The blocks by destination made on a second thread while this one
    // makes those by source: two encodes and compressions of every cell,
    // the bulk of a large run's commit, on two cores.
    auto incoming = std::async(std::launch::async, [this] { return EncodeIncoming(pending_); });
    absl::StatusOr<std::vector<EncodedBlock>> outgoing = EncodeBlocks(pending_);
    absl::StatusOr<std::vector<EncodedBlock>> in = incoming.get();
    if (!outgoing.ok()) return outgoing.status();
    if (!in.ok()) return in.status();
    GDR_RETURN_IF_ERROR(WriteBlocks("cell_blocks", "src", rail, size, *outgoing));
    GDR_RETURN_IF_ERROR(WriteBlocks("cell_blocks_in", "dst", rail, size, *in));
    pending_.clear();
    reason_at_.clear();
    reasons_.clear();
    return absl::OkStatus();
  }
  struct EncodedBlock {
    int64_t node;  // the row's key node
    int64_t cells;
    std::string data;
  };
  // `cells` (key node, cell), ordered by key node then the cell's node, as
  // one encoded block per key node.
  static absl::StatusOr<std::vector<EncodedBlock>> EncodeBlocks(
      const std::vector<std::pair<int64_t, BlockCell>>& cells) {
    std::vector<EncodedBlock> out;
    std::vector<BlockCell> block;
    for (size_t i = 0; i < cells.size();) {
      const int64_t node = cells[i].first;
      block.clear();
      for (; i < cells.size() && cells[i].first == node; ++i) block.push_back(cells[i].second);
      GDR_ASSIGN_OR_RETURN(std::string data, EncodeCellBlock(block));
      out.push_back({node, static_cast<int64_t>(block.size()), std::move(data)});
    }
    return out;
  }
  // The same cells by destination, each destination's in source order (a
  // counting sort: a matrix has few destinations and many cells), encoded.
  // The transposed copy (64 MB for a 1,024-node matrix) is kept across
  // matrices: a fresh one per matrix cost its page faults every time (43 %
  // of this thread's time at 1,024 x 8).
  absl::StatusOr<std::vector<EncodedBlock>> EncodeIncoming(
      const std::vector<std::pair<int64_t, BlockCell>>& pending) {
    std::unordered_map<int64_t, size_t> bucket;
    std::vector<int64_t> dsts;
    for (const auto& [src, c] : pending) {
      if (bucket.emplace(c.dst, 0).second) dsts.push_back(c.dst);
    }
    std::sort(dsts.begin(), dsts.end());
    std::vector<size_t> at(dsts.size() + 1, 0);
    for (size_t i = 0; i < dsts.size(); ++i) bucket[dsts[i]] = i;
    std::vector<size_t>& slot_of = slot_of_;
    slot_of.resize(pending.size());
    for (size_t i = 0; i < pending.size(); ++i) ++at[(slot_of[i] = bucket[pending[i].second.dst]) + 1];
    for (size_t i = 1; i < at.size(); ++i) at[i] += at[i - 1];
    std::vector<std::pair<int64_t, BlockCell>>& incoming = incoming_;
    incoming.resize(pending.size());  // every slot written below
    for (size_t i = 0; i < pending.size(); ++i) {
      const auto& [src, c] = pending[i];
      auto& slot = incoming[at[slot_of[i]]++];
      slot = {c.dst, c};
      slot.second.dst = src;  // the block's node field: the source
    }
    return EncodeBlocks(incoming);
  }
  // Encoded blocks into `table` (cell_blocks by source, cell_blocks_in by
  // destination), keyed by `key_column`.
  absl::Status WriteBlocks(std::string_view table, std::string_view key_column, uint32_t rail, uint64_t size,
                           const std::vector<EncodedBlock>& blocks) {
    const BulkColumn columns[] = {{"run", ColumnType::kInt64},        {"rail", ColumnType::kInt32},
                                  {"size_bytes", ColumnType::kInt64}, {key_column, ColumnType::kInt64},
                                  {"cell_count", ColumnType::kInt32}, {"encoding", ColumnType::kInt16},
                                  {"data", ColumnType::kBytes}};
    for (const EncodedBlock& b : blocks) {
      GDR_RETURN_IF_ERROR(Bulk(table, columns,
                               {key_, int64_t{rail}, static_cast<int64_t>(size), b.node, b.cells,
                                static_cast<int64_t>(ChunkEncoding::kZstd), Blob{b.data}}));
    }
    return absl::OkStatus();
  }
  // A row into `table` through the open bulk load of that table, opening
  // it (and ending another table's) when needed.
  absl::Status Bulk(std::string_view table, absl::Span<const BulkColumn> columns,
                    std::initializer_list<SqlValue> row) {
    if (!sink_ || sink_table_ != table) {
      GDR_RETURN_IF_ERROR(EndBulk());
      GDR_ASSIGN_OR_RETURN(sink_, db_->BulkRows(table, columns));
      sink_table_ = table;
    }
    return sink_->Add(absl::MakeConstSpan(row.begin(), row.size()));
  }
  absl::Status EndBulk() {
    if (!sink_) return absl::OkStatus();
    absl::Status st = sink_->Finish();
    sink_.reset();
    return st;
  }
  // Before any other statement: the matrix's blocks, then the bulk load ended.
  absl::Status EndWrites() {
    GDR_RETURN_IF_ERROR(EndCells());
    return EndBulk();
  }
  struct ReasonAt {
    size_t cell, offset, bytes;
  };
  Store* s_;
  Lease db_;
  std::unique_lock<std::mutex> lock_;
  int64_t key_;
  // The matrix being written: its cells (source, cell), their reasons kept
  // apart so the vector moves no strings.
  std::optional<std::pair<uint32_t, uint64_t>> matrix_;
  std::set<std::pair<uint32_t, uint64_t>> written_;
  std::vector<std::pair<int64_t, BlockCell>> pending_;
  // EncodeIncoming's, reused (only its thread touches them while it runs).
  std::vector<std::pair<int64_t, BlockCell>> incoming_;
  std::vector<size_t> slot_of_;
  std::vector<ReasonAt> reason_at_;
  std::string reasons_;
  std::unique_ptr<RowSink> sink_;
  std::string_view sink_table_;
  uint32_t chunks_ = 0;
  bool committed_ = false;
};

Store::Store(Connector connector, std::string name, Dialect dialect)
    : connector_(std::move(connector)), name_(std::move(name)), dialect_(dialect) {}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& url) {
  if (url.empty()) return absl::InvalidArgumentError("--db: empty (a file path or postgresql://...)");
  if (absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://")) {
    return OpenWith([url] { return OpenPostgres(url); },
                    absl::StrCat("postgresql ", RedactConninfo(url)));
  }
  std::string path = url;
  if (absl::StartsWith(path, "sqlite://")) path = path.substr(9);
  return OpenWith([path] { return OpenSqlite(path); }, absl::StrCat("sqlite ", path));
}

absl::StatusOr<std::unique_ptr<Store>> Store::OpenWith(Connector connector, std::string name) {
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<SqlDb> db, connector());
  GDR_ASSIGN_OR_RETURN(int before, Migrate(*db));
  if (before != LatestSchemaVersion()) {
    spdlog::info("{}: schema at version {} (was {})", name, LatestSchemaVersion(), before);
  }
  std::unique_ptr<Store> s(new Store(std::move(connector), std::move(name), db->dialect()));
  GDR_RETURN_IF_ERROR(s->LoadNodes(*db));
  s->Release(std::move(db));
  return s;
}

absl::StatusOr<Store::Lease> Store::Acquire() {
  {
    std::lock_guard<std::mutex> l(pool_mu_);
    if (!idle_.empty()) {
      auto db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  GDR_ASSIGN_OR_RETURN(auto db, connector_());
  return Lease(this, std::move(db));
}

void Store::Release(std::unique_ptr<SqlDb> db) {
  db->Rollback();  // a lease never leaves a transaction open
  std::lock_guard<std::mutex> l(pool_mu_);
  if (idle_.size() < 8) idle_.push_back(std::move(db));
}

absl::Status Store::LoadNodes(SqlDb& db) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  return db.Query("SELECT id, name FROM nodes", {}, [&](const SqlRow& r) {
    node_ids_[r.Text(1)] = r.Int(0);
    node_names_[r.Int(0)] = r.Text(1);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<int64_t>> Store::InternNodes(const std::vector<std::string>& names) {
  std::vector<int64_t> ids(names.size(), -1);
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = node_ids_.find(names[i]);
      if (it != node_ids_.end()) {
        ids[i] = it->second;
      } else {
        missing.push_back(i);
      }
    }
  }
  if (missing.empty()) return ids;
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  // Autocommit inserts: a name interned by an ingest that then rolls back
  // stays (harmless: names are not data), and another server's insert of
  // the same name is simply found. Up to 512 names per statement, two round
  // trips a batch (one INSERT and one SELECT per name cost PostgreSQL about
  // a second per 256 new nodes, bench/server_store.sh). A batch is padded
  // with its last name to a power of two, so few statement texts exist.
  constexpr size_t kMaxBatch = 512;
  for (size_t at = 0; at < missing.size(); at += kMaxBatch) {
    const size_t n = std::min(kMaxBatch, missing.size() - at);
    size_t width = 1;
    while (width < n) width *= 2;
    std::vector<SqlValue> params;
    std::string values, list;
    for (size_t k = 0; k < width; ++k) {
      params.emplace_back(std::string_view(names[missing[at + std::min(k, n - 1)]]));
      absl::StrAppend(&values, k ? ", " : "", "(?)");
      absl::StrAppend(&list, k ? ", " : "", "?");
    }
    GDR_RETURN_IF_ERROR(db->Exec(
        absl::StrCat("INSERT INTO nodes (name) VALUES ", values, " ON CONFLICT (name) DO NOTHING"), params));
    std::unordered_map<std::string, int64_t> found;
    GDR_RETURN_IF_ERROR(db->Query(absl::StrCat("SELECT id, name FROM nodes WHERE name IN (", list, ")"),
                                  params, [&](const SqlRow& r) {
                                    found[r.Text(1)] = r.Int(0);
                                    return absl::OkStatus();
                                  }));
    std::lock_guard<std::mutex> l(nodes_mu_);
    for (size_t k = 0; k < n; ++k) {
      const size_t i = missing[at + k];
      auto it = found.find(names[i]);
      if (it == found.end()) {
        return absl::InternalError(absl::StrCat(db->name(), ": node ", names[i], " was not stored"));
      }
      ids[i] = it->second;
      node_ids_[names[i]] = ids[i];
      node_names_[ids[i]] = names[i];
    }
  }
  return ids;
}

std::string Store::NodeName(int64_t id) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  auto it = node_names_.find(id);
  if (it != node_names_.end()) return it->second;
  return "";
}

absl::StatusOr<int64_t> Store::NodeId(const std::string& name) {
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    auto it = node_ids_.find(name);
    if (it != node_ids_.end()) return it->second;
  }
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  auto id = QueryInt(*db, "SELECT id FROM nodes WHERE name = ?", {std::string_view(name)});
  if (absl::IsNotFound(id.status())) return -1;
  if (!id.ok()) return id.status();
  std::lock_guard<std::mutex> l(nodes_mu_);
  node_ids_[name] = *id;
  node_names_[*id] = name;
  return *id;
}

absl::StatusOr<std::unique_ptr<RunWriter>> Store::BeginRun(const RunRow& r) {
  std::unique_lock<std::mutex> lock(write_mu_);
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  GDR_RETURN_IF_ERROR(db->Begin());
  auto key = QueryInt(
      *db,
      "INSERT INTO runs (run_id, cluster, started_us, finished_us, stored_us, mode, passed, summary, "
      "node_count, rail_count, cell_count, low_cells, failed_cells, pair_count, "
      "baseline_regressions, last_pass_regressions, header) "
      "VALUES (?, ?, ?, ?, ?, ?, 0, '', 0, 0, 0, 0, 0, 0, 0, 0, ?) RETURNING id",
      {std::string_view(r.run_id), std::string_view(r.cluster), r.started_us, r.finished_us,
       r.stored_us, std::string_view(r.mode), Blob{std::string_view()}});
  if (!key.ok()) {
    db->Rollback();
    if (absl::IsAlreadyExists(key.status())) {
      return absl::AlreadyExistsError(absl::StrCat("run ", r.run_id, " is already stored"));
    }
    return key.status();
  }
  return std::unique_ptr<RunWriter>(new Writer(this, std::move(db), std::move(lock), *key));
}

}  // namespace gdrbench::server::store
