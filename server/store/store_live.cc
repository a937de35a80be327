// Store: live runs (store.h, schema version 7). Each write takes the
// store's write lock for one short transaction, so an append is durable
// (committed) before the server acknowledges it.
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/store/store.h"

namespace gdrbench::server::store {
namespace {

constexpr char kLiveCols[] =
    "run_id, cluster, opened_by, opened_us, updated_us, next_test, cell_count, byte_count, plan FROM "
    "live_runs";

LiveRunRow ReadLiveRow(const SqlRow& x) {
  LiveRunRow r;
  r.run_id = x.Text(0);
  r.cluster = x.Text(1);
  r.opened_by = x.Text(2);
  r.opened_us = x.Int(3);
  r.updated_us = x.Int(4);
  r.next_test = static_cast<uint64_t>(x.Int(5));
  r.cells = static_cast<uint64_t>(x.Int(6));
  r.bytes = static_cast<uint64_t>(x.Int(7));
  r.plan = x.Bytes(8);
  return r;
}

absl::StatusOr<std::optional<LiveRunRow>> FindLive(SqlDb& db, const std::string& run_id) {
  std::optional<LiveRunRow> out;
  GDR_RETURN_IF_ERROR(db.Query(absl::StrCat("SELECT ", kLiveCols, " WHERE run_id = ?"),
                               {std::string_view(run_id)}, [&](const SqlRow& x) {
                                 out = ReadLiveRow(x);
                                 return absl::OkStatus();
                               }));
  return out;
}

}  // namespace

absl::StatusOr<LiveRunRow> Store::OpenLiveRun(const LiveRunRow& row, uint32_t max_open,
                                              int64_t stale_before_us, std::vector<std::string>* dropped) {
  std::lock_guard<std::mutex> lock(write_mu_);
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  GDR_RETURN_IF_ERROR(db->Begin());
  GDR_ASSIGN_OR_RETURN(std::optional<LiveRunRow> found, FindLive(*db, row.run_id));
  if (found) return *found;  // the lease rolls back the empty transaction
  GDR_ASSIGN_OR_RETURN(int64_t open, QueryInt(*db, "SELECT COUNT(*) FROM live_runs"));
  if (open >= static_cast<int64_t>(max_open)) {
    // Room from the live runs nobody has sent to for long: their sweeps
    // died; resumed, one opens its run again and sends it from its journal.
    std::vector<std::string> stale;
    GDR_RETURN_IF_ERROR(db->Query("SELECT run_id FROM live_runs WHERE updated_us < ? ORDER BY updated_us",
                                  {stale_before_us}, [&](const SqlRow& x) {
                                    stale.push_back(x.Text(0));
                                    return absl::OkStatus();
                                  }));
    for (const std::string& run_id : stale) {
      GDR_RETURN_IF_ERROR(db->Exec("DELETE FROM live_chunks WHERE run_id = ?", {std::string_view(run_id)}));
      GDR_RETURN_IF_ERROR(db->Exec("DELETE FROM live_runs WHERE run_id = ?", {std::string_view(run_id)}));
    }
    open -= static_cast<int64_t>(stale.size());
    if (dropped != nullptr) *dropped = std::move(stale);
  }
  if (open >= static_cast<int64_t>(max_open)) {
    return absl::ResourceExhaustedError(absl::StrCat("the server has ", open,
                                                     " live runs open, its limit: finish or abandon one ",
                                                     "(gdrbench-server's DELETE /api/v1/live-runs/RUN_ID)"));
  }
  const int64_t now = NowMicros();
  GDR_RETURN_IF_ERROR(db->Exec(
      "INSERT INTO live_runs (run_id, cluster, opened_by, opened_us, updated_us, next_test, cell_count, "
      "byte_count, plan) VALUES (?, ?, ?, ?, ?, 0, 0, 0, ?)",
      {std::string_view(row.run_id), std::string_view(row.cluster), std::string_view(row.opened_by), now, now,
       Blob{row.plan}}));
  GDR_RETURN_IF_ERROR(db->Commit());
  LiveRunRow out = row;
  out.opened_us = out.updated_us = now;
  out.next_test = out.cells = out.bytes = 0;
  return out;
}

absl::StatusOr<std::optional<LiveRunRow>> Store::FindLiveRun(const std::string& run_id) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  return FindLive(*db, run_id);
}

absl::StatusOr<std::vector<LiveRunRow>> Store::ListLiveRuns() {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<LiveRunRow> out;
  GDR_RETURN_IF_ERROR(
      db->Query(absl::StrCat("SELECT ", kLiveCols, " ORDER BY opened_us, run_id"), {}, [&](const SqlRow& x) {
        out.push_back(ReadLiveRow(x));
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<uint64_t> Store::AppendLiveChunk(const std::string& run_id, uint64_t first_test,
                                                uint32_t tests, uint64_t cells, std::string_view data) {
  std::lock_guard<std::mutex> lock(write_mu_);
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  GDR_RETURN_IF_ERROR(db->Begin());
  GDR_ASSIGN_OR_RETURN(std::optional<LiveRunRow> live, FindLive(*db, run_id));
  if (!live) return absl::NotFoundError(absl::StrCat("no live run ", run_id, " is open"));
  if (first_test != live->next_test || tests == 0) return live->next_test;
  GDR_RETURN_IF_ERROR(
      db->Exec("INSERT INTO live_chunks (run_id, first_test, test_count, data) VALUES (?, ?, ?, ?)",
               {std::string_view(run_id), static_cast<int64_t>(first_test), int64_t{tests}, Blob{data}}));
  const uint64_t next = first_test + tests;
  GDR_RETURN_IF_ERROR(db->Exec(
      "UPDATE live_runs SET next_test = ?, cell_count = cell_count + ?, byte_count = byte_count + ?, "
      "updated_us = ? WHERE run_id = ?",
      {static_cast<int64_t>(next), static_cast<int64_t>(cells), static_cast<int64_t>(data.size()),
       NowMicros(), std::string_view(run_id)}));
  GDR_RETURN_IF_ERROR(db->Commit());
  return next;
}

absl::Status Store::ReadLiveChunks(const std::string& run_id, uint64_t from_test, uint32_t limit,
                                   const std::function<absl::Status(const LiveChunkRow&)>& fn) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  // The chunk holding from_test starts at the largest first_test <= from_test.
  return db->Query(
      "SELECT first_test, test_count, data FROM live_chunks WHERE run_id = ? AND first_test >= "
      "(SELECT COALESCE(MAX(first_test), 0) FROM live_chunks WHERE run_id = ? AND first_test <= ?) "
      "ORDER BY first_test LIMIT ?",
      {std::string_view(run_id), std::string_view(run_id), static_cast<int64_t>(from_test), int64_t{limit}},
      [&](const SqlRow& x) {
        LiveChunkRow c;
        c.first_test = static_cast<uint64_t>(x.Int(0));
        c.tests = static_cast<uint32_t>(x.Int(1));
        c.data = x.Bytes(2);
        if (c.first_test + c.tests <= from_test) return absl::OkStatus();
        return fn(c);
      });
}

absl::StatusOr<bool> Store::DeleteLiveRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(write_mu_);
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  GDR_RETURN_IF_ERROR(db->Begin());
  GDR_ASSIGN_OR_RETURN(std::optional<LiveRunRow> live, FindLive(*db, run_id));
  if (!live) return false;
  GDR_RETURN_IF_ERROR(db->Exec("DELETE FROM live_chunks WHERE run_id = ?", {std::string_view(run_id)}));
  GDR_RETURN_IF_ERROR(db->Exec("DELETE FROM live_runs WHERE run_id = ?", {std::string_view(run_id)}));
  GDR_RETURN_IF_ERROR(db->Commit());
  return true;
}

}  // namespace gdrbench::server::store
