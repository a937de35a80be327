// The store's reads of runs, baselines and retention (store.h); its cells,
// node statistics and trends are in store_cells.cc.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "server/store/chunk_codec.h"
#include "server/store/store.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::store {
namespace {

constexpr char kRunCols[] =
    "r.id, r.run_id, r.cluster, r.started_us, r.finished_us, r.stored_us, r.mode, r.passed, "
    "r.summary, r.node_count, r.rail_count, r.cell_count, r.low_cells, r.failed_cells, "
    "r.pair_count, r.baseline_regressions, r.last_pass_regressions, "
    "CASE WHEN b.run IS NULL THEN 0 ELSE 1 END, r.verdict_cells "
    "FROM runs r LEFT JOIN baselines b ON b.run = r.id";

RunRow ReadRunRow(const SqlRow& x) {
  RunRow r;
  r.key = x.Int(0);
  r.run_id = x.Text(1);
  r.cluster = x.Text(2);
  r.started_us = x.Int(3);
  r.finished_us = x.Int(4);
  r.stored_us = x.Int(5);
  r.mode = x.Text(6);
  r.passed = x.Int(7) != 0;
  r.summary = x.Text(8);
  r.nodes = static_cast<uint32_t>(x.Int(9));
  r.rails = static_cast<uint32_t>(x.Int(10));
  r.cells = static_cast<uint64_t>(x.Int(11));
  r.low_cells = static_cast<uint64_t>(x.Int(12));
  r.failed_cells = static_cast<uint64_t>(x.Int(13));
  r.pairs = static_cast<uint64_t>(x.Int(14));
  r.baseline_regressions = static_cast<uint32_t>(x.Int(15));
  r.last_pass_regressions = static_cast<uint32_t>(x.Int(16));
  r.is_baseline = x.Int(17) != 0;
  r.verdict_cells = static_cast<uint64_t>(x.Int(18));
  return r;
}

}  // namespace

absl::StatusOr<std::optional<RunRow>> Store::FindRun(const std::string& run_id) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<RunRow> out;
  GDR_RETURN_IF_ERROR(db->Query(absl::StrCat("SELECT ", kRunCols, " WHERE r.run_id = ?"),
                                {std::string_view(run_id)}, [&](const SqlRow& x) {
                                  out = ReadRunRow(x);
                                  return absl::OkStatus();
                                }));
  return out;
}

absl::StatusOr<std::optional<RunRow>> Store::FindRunByKey(int64_t key) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<RunRow> out;
  GDR_RETURN_IF_ERROR(
      db->Query(absl::StrCat("SELECT ", kRunCols, " WHERE r.id = ?"), {key}, [&](const SqlRow& x) {
        out = ReadRunRow(x);
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<v1::Run> Store::ReadHeader(int64_t run_key) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<v1::Run> run;
  GDR_RETURN_IF_ERROR(db->Query("SELECT header FROM runs WHERE id = ?", {run_key}, [&](const SqlRow& x) {
    run.emplace();
    if (!run->ParseFromString(x.Bytes(0))) {
      return absl::DataLossError(absl::StrCat(name_, ": run ", run_key, ": header does not parse"));
    }
    return absl::OkStatus();
  }));
  if (!run) return absl::NotFoundError(absl::StrCat("run #", run_key, " is not stored"));
  return *std::move(run);
}

absl::Status Store::ReadPairChunks(int64_t run_key,
                                   const std::function<absl::Status(std::string)>& fn) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  // One chunk per query: a 1024-node run has thousands of chunks and a
  // PostgreSQL result is held whole in memory.
  GDR_ASSIGN_OR_RETURN(int64_t chunks,
                       QueryInt(*db, "SELECT COUNT(*) FROM run_pairs WHERE run = ?", {run_key}));
  for (int64_t k = 0; k < chunks; ++k) {
    std::string data;
    int64_t encoding = 0;
    GDR_RETURN_IF_ERROR(db->Query("SELECT data, encoding FROM run_pairs WHERE run = ? AND chunk = ?",
                                  {run_key, k}, [&](const SqlRow& x) {
                                    data = x.Bytes(0);
                                    encoding = x.Int(1);
                                    return absl::OkStatus();
                                  }));
    auto chunk = DecodeChunk(encoding, std::move(data));
    if (!chunk.ok()) {
      return absl::DataLossError(absl::StrCat(name_, ": run ", run_key, ", pair chunk ", k, ": ",
                                              chunk.status().message()));
    }
    GDR_RETURN_IF_ERROR(fn(*std::move(chunk)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RunRow>> Store::ListRuns(const RunFilter& f) {
  std::vector<std::string> where;
  std::vector<SqlValue> params;
  if (!f.cluster.empty()) {
    where.push_back("r.cluster = ?");
    params.push_back(std::string_view(f.cluster));
  }
  if (f.passed) {
    where.push_back("r.passed = ?");
    params.push_back(int64_t{*f.passed});
  }
  if (f.since_us) {
    where.push_back("r.started_us >= ?");
    params.push_back(f.since_us);
  }
  if (f.until_us) {
    where.push_back("r.started_us < ?");
    params.push_back(f.until_us);
  }
  if (f.after) {
    where.push_back("(r.started_us < ? OR (r.started_us = ? AND r.id < ?))");
    params.push_back(f.after->first);
    params.push_back(f.after->first);
    params.push_back(f.after->second);
  }
  std::string sql = absl::StrCat("SELECT ", kRunCols,
                                 where.empty() ? "" : absl::StrCat(" WHERE ", absl::StrJoin(where, " AND ")),
                                 " ORDER BY r.started_us DESC, r.id DESC LIMIT ?");
  params.push_back(int64_t{f.limit});
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<RunRow> out;
  GDR_RETURN_IF_ERROR(db->Query(sql, params, [&](const SqlRow& x) {
    out.push_back(ReadRunRow(x));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<std::optional<RunRow>> Store::LastPassingBefore(const std::string& cluster,
                                                               int64_t before_us) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<RunRow> out;
  GDR_RETURN_IF_ERROR(db->Query(absl::StrCat("SELECT ", kRunCols,
                                             " WHERE r.cluster = ? AND r.passed = 1 AND r.started_us < ? "
                                             "ORDER BY r.started_us DESC, r.id DESC LIMIT 1"),
                                {std::string_view(cluster), before_us}, [&](const SqlRow& x) {
                                  out = ReadRunRow(x);
                                  return absl::OkStatus();
                                }));
  return out;
}

absl::StatusOr<std::vector<RunRow>> Store::LatestRuns() {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<RunRow> out;
  GDR_RETURN_IF_ERROR(
      db->Query(absl::StrCat("SELECT ", kRunCols,
                             " WHERE r.id = (SELECT r2.id FROM runs r2 WHERE r2.cluster = r.cluster "
                             "ORDER BY r2.started_us DESC, r2.id DESC LIMIT 1) ORDER BY r.cluster"),
                {}, [&](const SqlRow& x) {
                  out.push_back(ReadRunRow(x));
                  return absl::OkStatus();
                }));
  return out;
}

absl::StatusOr<std::vector<ClusterRow>> Store::Clusters() {
  GDR_ASSIGN_OR_RETURN(std::vector<RunRow> latest, LatestRuns());
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<ClusterRow> out;
  for (const RunRow& r : latest) {
    ClusterRow c;
    c.name = r.cluster;
    c.last_run_id = r.run_id;
    GDR_ASSIGN_OR_RETURN(int64_t n, QueryInt(*db, "SELECT COUNT(*) FROM runs WHERE cluster = ?",
                                             {std::string_view(r.cluster)}));
    c.runs = static_cast<uint64_t>(n);
    GDR_RETURN_IF_ERROR(
        db->Query("SELECT r.run_id FROM baselines b JOIN runs r ON r.id = b.run WHERE b.cluster = ?",
                  {std::string_view(r.cluster)}, [&](const SqlRow& x) {
                    c.baseline_run_id = x.Text(0);
                    return absl::OkStatus();
                  }));
    out.push_back(std::move(c));
  }
  return out;
}

absl::Status Store::SetBaseline(const std::string& cluster, int64_t run_key, const std::string& by) {
  std::lock_guard<std::mutex> lock(write_mu_);
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  return db->Exec(
      "INSERT INTO baselines (cluster, run, set_us, set_by) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (cluster) DO UPDATE SET run = excluded.run, set_us = excluded.set_us, "
      "set_by = excluded.set_by",
      {std::string_view(cluster), run_key, NowMicros(), std::string_view(by)});
}

absl::StatusOr<std::optional<BaselineRow>> Store::GetBaseline(const std::string& cluster) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<BaselineRow> out;
  GDR_RETURN_IF_ERROR(db->Query("SELECT cluster, run, set_us, set_by FROM baselines WHERE cluster = ?",
                                {std::string_view(cluster)}, [&](const SqlRow& x) {
                                  out = BaselineRow{x.Text(0), x.Int(1), x.Int(2), x.Text(3)};
                                  return absl::OkStatus();
                                }));
  return out;
}

absl::StatusOr<std::optional<std::string>> Store::ReadCapacity(int64_t run_key) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<std::string> out;
  GDR_RETURN_IF_ERROR(
      db->Query("SELECT data FROM run_capacity WHERE run = ?", {run_key}, [&](const SqlRow& x) {
        out = x.Bytes(0);
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<std::optional<std::string>> Store::ReadMatrixBlob(int64_t run_key, uint32_t rail,
                                                                uint64_t size_bytes) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<std::string> out;
  GDR_RETURN_IF_ERROR(
      db->Query("SELECT data FROM run_matrix_blobs WHERE run = ? AND rail = ? AND size_bytes = ?",
                {run_key, int64_t{rail}, static_cast<int64_t>(size_bytes)}, [&](const SqlRow& x) {
                  out = x.Bytes(0);
                  return absl::OkStatus();
                }));
  return out;
}

absl::StatusOr<std::optional<LinkNoiseRow>> Store::ReadLinkNoise(const std::string& cluster, uint32_t rail,
                                                                  uint64_t size_bytes) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::optional<LinkNoiseRow> out;
  GDR_RETURN_IF_ERROR(db->Query(
      "SELECT newest_started_us, data FROM link_noise WHERE cluster = ? AND rail = ? AND size_bytes = ?",
      {std::string_view(cluster), int64_t{rail}, static_cast<int64_t>(size_bytes)}, [&](const SqlRow& x) {
        out = LinkNoiseRow{cluster, rail, size_bytes, x.Int(0), x.Bytes(1)};
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<uint64_t> Store::DeleteRunsBefore(int64_t cutoff_us) {
  std::vector<std::pair<int64_t, std::string>> victims;
  {
    GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
    GDR_RETURN_IF_ERROR(db->Query(
        "SELECT id, run_id FROM runs WHERE started_us < ? AND id NOT IN (SELECT run FROM baselines) "
        "ORDER BY started_us",
        {cutoff_us}, [&](const SqlRow& x) {
          victims.emplace_back(x.Int(0), x.Text(1));
          return absl::OkStatus();
        }));
  }
  // One transaction per run: a long retention pass never holds the write
  // lock for more than one run's rows.
  uint64_t deleted = 0;
  for (const auto& [key, run_id] : victims) {
    std::lock_guard<std::mutex> lock(write_mu_);
    GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
    GDR_RETURN_IF_ERROR(db->Begin());
    // A baseline set since the list was made keeps the run.
    auto kept = QueryInt(*db, "SELECT COUNT(*) FROM baselines WHERE run = ?", {key});
    absl::Status st = kept.status();
    if (st.ok() && *kept > 0) {
      db->Rollback();
      continue;
    }
    for (std::string table :
         {"cells", "cell_blocks", "node_stats", "run_pairs", "run_capacity", "run_matrix_blobs", "runs"}) {
      if (st.ok()) {
        st = db->Exec(absl::StrCat("DELETE FROM ", table, table == "runs" ? " WHERE id = ?" : " WHERE run = ?"),
                      {key});
      }
    }
    if (st.ok()) st = db->Commit();
    if (!st.ok()) {
      db->Rollback();
      return st;
    }
    spdlog::info("retention: deleted run {}", run_id);
    ++deleted;
  }
  return deleted;
}

}  // namespace gdrbench::server::store
