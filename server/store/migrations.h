// Versioned schema migrations. Each migration has a version (1, 2, ...), a
// name and its SQL for each dialect; Migrate applies the missing ones in
// order in one transaction, each with its row in schema_migrations, so a
// crash leaves the store at the version it had. PostgreSQL takes an advisory
// lock first, so servers starting together migrate once.
//
// Schema (version 1), every time in unix microseconds:
//   nodes        (id, name UNIQUE)                 node names, shared by runs
//   runs         (id, run_id UNIQUE, cluster, started_us, finished_us,
//                 stored_us, mode, passed, summary, node_count, rail_count,
//                 cell_count, low_cells, failed_cells, pair_count,
//                 baseline_regressions, last_pass_regressions,
//                 header)                           header: the v1.Run without
//                                                   pairs and matrix cells
//   baselines    (cluster PRIMARY KEY, run, set_us, set_by)
//   run_pairs    (run, chunk, pair_count, data)    v1.PairChunk, serialized
//                (version 4: + encoding; data zstd-compressed, chunk_codec.h;
//                version 8: PostgreSQL's data STORAGE EXTERNAL, no pglz)
//   cells        (run, rail, size_bytes, src, dst, status, bw_avg_gbps,
//                (written up to version 5; read for the runs stored then)
//                 verdict, expected_gbps, baseline_gbps, reason NULL)
//                 PRIMARY KEY (run, rail, size_bytes, src, dst):
//                 a link across runs is one lookup per run; a node as source
//                 is one range per (rail, size)
//   node_stats   (run, node, rail, size_bytes, ok_cells, low_cells,
//                 failed_cells, median_gbps, tx_median_gbps, rx_median_gbps)
//                 PRIMARY KEY (node, rail, run): a node's trend, the metrics
//   link_noise   (cluster, rail, size_bytes, newest_started_us, data)
//                 (version 5) PRIMARY KEY (cluster, rail, size_bytes): each
//                 link's window of recent passing readings of that matrix
//                 (server/history/link_noise.h)
//   cell_blocks  (run, rail, size_bytes, src, cell_count, encoding, data)
//                (version 6) PRIMARY KEY (run, rail, size_bytes, src): a
//                source's cells of one matrix in one compressed block
//                (cell_block.h); a link across runs is still one lookup
//                per run, a node as source one row per matrix
//   cell_blocks_in (run, rail, size_bytes, dst, cell_count, encoding, data)
//                (version 6) the same cells per destination: a node as
//                destination is one row per matrix
//   live_runs    (run_id PRIMARY KEY, cluster, opened_by, opened_us,
//                 updated_us, next_test, cell_count, byte_count, plan)
//                (version 7) a sweep streaming its tests (issue 30)
//   live_chunks  (run_id, first_test, test_count, data) PRIMARY KEY
//                (run_id, first_test): its tests, without a gap
// Errors: FAILED_PRECONDITION when the store is newer than this binary.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

struct Migration {
  int version;
  std::string name;
  std::string sqlite;
  std::string postgres;
};

const std::vector<Migration>& Migrations();
int LatestSchemaVersion();

// Brings `db` to the latest version. Returns the version it was at (0: new).
absl::StatusOr<int> Migrate(SqlDb& db);
// Brings `db` to `version` at most (tests make a store of an older server).
absl::StatusOr<int> MigrateTo(SqlDb& db, int version);

}  // namespace gdrbench::server::store
