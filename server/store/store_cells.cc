// The store's reads of cells (either layout: rows or blocks), node
// statistics and trends (store.h); the runs' are in store_queries.cc.
#include <algorithm>
#include <iterator>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "server/store/cell_block.h"
#include "server/store/store.h"

namespace gdrbench::server::store {
namespace {

CellRecord ReadCell(const SqlRow& x, int first) {
  CellRecord c;
  c.run = x.Int(first);
  c.rail = static_cast<uint32_t>(x.Int(first + 1));
  c.size_bytes = static_cast<uint64_t>(x.Int(first + 2));
  c.src = x.Int(first + 3);
  c.dst = x.Int(first + 4);
  c.status = static_cast<int>(x.Int(first + 5));
  c.bw_avg_gbps = x.Real(first + 6);
  c.verdict = static_cast<int>(x.Int(first + 7));
  c.expected_gbps = x.Real(first + 8);
  c.baseline_gbps = x.Real(first + 9);
  if (!x.IsNull(first + 10)) c.reason = x.Text(first + 10);
  return c;
}

NodeStatRow ReadNodeStat(const SqlRow& x, int first) {
  NodeStatRow n;
  n.node = x.Int(first);
  n.rail = static_cast<uint32_t>(x.Int(first + 1));
  n.size_bytes = static_cast<uint64_t>(x.Int(first + 2));
  n.ok_cells = static_cast<uint32_t>(x.Int(first + 3));
  n.low_cells = static_cast<uint32_t>(x.Int(first + 4));
  n.failed_cells = static_cast<uint32_t>(x.Int(first + 5));
  n.median_gbps = x.Real(first + 6);
  n.tx_median_gbps = x.Real(first + 7);
  n.rx_median_gbps = x.Real(first + 8);
  return n;
}

constexpr char kCellCols[] =
    "c.run, c.rail, c.size_bytes, c.src, c.dst, c.status, c.bw_avg_gbps, c.verdict, "
    "c.expected_gbps, c.baseline_gbps, c.reason";
constexpr char kStatCols[] =
    "s.node, s.rail, s.size_bytes, s.ok_cells, s.low_cells, s.failed_cells, s.median_gbps, "
    "s.tx_median_gbps, s.rx_median_gbps";

}  // namespace

absl::Status Store::ReadCells(const CellQuery& q, const std::function<absl::Status(const CellRecord&)>& fn) {
  if ((q.src < 0 && q.dst < 0) || (q.rail && q.size_bytes)) return ReadCellsOfMatrix(q, {}, fn);
  // A node's cells: one query per matrix of the run (rail and size fixed),
  // so the primary key serves them (a node as source is a range; as target,
  // one lookup per source), in the same order as one query would return.
  GDR_ASSIGN_OR_RETURN(v1::Run header, ReadHeader(q.run));
  std::vector<std::pair<uint32_t, uint64_t>> matrices;
  std::vector<std::vector<std::string>> names;
  for (const auto& m : header.matrices()) {
    if (q.rail && *q.rail != m.rail()) continue;
    if (q.size_bytes && q.size_bytes != m.size_bytes()) continue;
    matrices.push_back({m.rail(), m.size_bytes()});
    names.emplace_back(m.nodes().begin(), m.nodes().end());
  }
  std::vector<size_t> order(matrices.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return matrices[a] < matrices[b]; });
  uint32_t left = q.limit;
  for (size_t i : order) {
    const auto [rail, size] = matrices[i];
    if (q.after &&
        std::make_pair(rail, size) < std::make_pair(std::get<0>(*q.after), std::get<1>(*q.after))) {
      continue;
    }
    CellQuery one = q;
    one.rail = rail;
    one.size_bytes = size;
    one.limit = left;
    std::vector<int64_t> sources;
    if (q.dst >= 0 && q.src < 0) {
      GDR_ASSIGN_OR_RETURN(sources, InternNodes(names[i]));
    }
    uint32_t got = 0;
    GDR_RETURN_IF_ERROR(ReadCellsOfMatrix(one, sources, [&](const CellRecord& c) {
      ++got;
      return fn(c);
    }));
    if (q.limit) {
      left -= std::min(left, got);
      if (left == 0) break;
    }
  }
  return absl::OkStatus();
}

absl::Status Store::ReadCellsOfMatrix(const CellQuery& q, const std::vector<int64_t>& sources,
                                      const std::function<absl::Status(const CellRecord&)>& fn) {
  std::vector<std::string> where = {"c.run = ?"};
  std::vector<SqlValue> params = {q.run};
  if (q.rail) {
    where.push_back("c.rail = ?");
    params.push_back(int64_t{*q.rail});
  }
  if (q.size_bytes) {
    where.push_back("c.size_bytes = ?");
    params.push_back(static_cast<int64_t>(q.size_bytes));
  }
  if (q.src >= 0) {
    where.push_back("c.src = ?");
    params.push_back(q.src);
  } else if (!sources.empty()) {
    // Our own integer ids, inlined: every (src, dst) a primary-key lookup.
    where.push_back(absl::StrCat("c.src IN (", absl::StrJoin(sources, ","), ")"));
  }
  if (q.dst >= 0) {
    where.push_back("c.dst = ?");
    params.push_back(q.dst);
  }
  if (q.verdict >= 0) {
    where.push_back("c.verdict = ?");
    params.push_back(int64_t{q.verdict});
  }
  if (q.after) {
    where.push_back("(c.rail, c.size_bytes, c.src, c.dst) > (?, ?, ?, ?)");
    params.push_back(int64_t{std::get<0>(*q.after)});
    params.push_back(static_cast<int64_t>(std::get<1>(*q.after)));
    params.push_back(std::get<2>(*q.after));
    params.push_back(std::get<3>(*q.after));
  }
  std::string sql = absl::StrCat("SELECT ", kCellCols, " FROM cells c WHERE ", absl::StrJoin(where, " AND "),
                                 " ORDER BY c.rail, c.size_bytes, c.src, c.dst");
  if (q.limit) {
    absl::StrAppend(&sql, " LIMIT ?");
    params.push_back(int64_t{q.limit});
  }
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  // A run's cells are in one layout: rows (stored before schema version 6)
  // or blocks; the other query finds nothing.
  uint32_t got = 0;
  GDR_RETURN_IF_ERROR(db->Query(sql, params, [&](const SqlRow& x) {
    ++got;
    return fn(ReadCell(x, 0));
  }));
  if (q.limit && got >= q.limit) return absl::OkStatus();
  return ReadBlocksOfMatrix(*db, q, sources, q.limit ? q.limit - got : 0, fn);
}

absl::Status Store::ReadBlocksOfMatrix(SqlDb& db, const CellQuery& q, const std::vector<int64_t>& sources,
                                       uint32_t limit,
                                       const std::function<absl::Status(const CellRecord&)>& fn) {
  // A node as destination (no source): its own blocks (cell_blocks_in).
  const bool incoming = q.dst >= 0 && q.src < 0;
  std::vector<std::string> where = {"b.run = ?"};
  std::vector<SqlValue> params = {q.run};
  if (q.rail) {
    where.push_back("b.rail = ?");
    params.push_back(int64_t{*q.rail});
  }
  if (q.size_bytes) {
    where.push_back("b.size_bytes = ?");
    params.push_back(static_cast<int64_t>(q.size_bytes));
  }
  if (incoming) {
    where.push_back("b.dst = ?");
    params.push_back(q.dst);
  } else if (q.src >= 0) {
    where.push_back("b.src = ?");
    params.push_back(q.src);
  } else if (!sources.empty()) {
    where.push_back(absl::StrCat("b.src IN (", absl::StrJoin(sources, ","), ")"));
  }
  if (q.after && incoming) {
    where.push_back("(b.rail, b.size_bytes) >= (?, ?)");
    params.push_back(int64_t{std::get<0>(*q.after)});
    params.push_back(static_cast<int64_t>(std::get<1>(*q.after)));
  } else if (q.after) {
    where.push_back("(b.rail, b.size_bytes, b.src) >= (?, ?, ?)");
    params.push_back(int64_t{std::get<0>(*q.after)});
    params.push_back(static_cast<int64_t>(std::get<1>(*q.after)));
    params.push_back(std::get<2>(*q.after));
  }
  const std::string sql =
      incoming
          ? absl::StrCat(
                "SELECT b.rail, b.size_bytes, b.dst, b.encoding, b.data FROM cell_blocks_in b WHERE ",
                absl::StrJoin(where, " AND "), " ORDER BY b.rail, b.size_bytes")
          : absl::StrCat("SELECT b.rail, b.size_bytes, b.src, b.encoding, b.data FROM cell_blocks b WHERE ",
                         absl::StrJoin(where, " AND "), " ORDER BY b.rail, b.size_bytes, b.src");
  uint32_t got = 0;
  bool enough = false;
  absl::Status st = db.Query(sql, params, [&](const SqlRow& x) {
    CellRecord key;
    key.run = q.run;
    key.rail = static_cast<uint32_t>(x.Int(0));
    key.size_bytes = static_cast<uint64_t>(x.Int(1));
    (incoming ? key.dst : key.src) = x.Int(2);
    return DecodeCellBlock(
        x.Int(3), x.Bytes(4), key,
        [&](const CellRecord& c) {
          if (q.dst >= 0 && c.dst != q.dst) return absl::OkStatus();
          if (q.verdict >= 0 && c.verdict != q.verdict) return absl::OkStatus();
          if (q.after && std::make_tuple(c.rail, c.size_bytes, c.src, c.dst) <= *q.after)
            return absl::OkStatus();
          GDR_RETURN_IF_ERROR(fn(c));
          if (limit && ++got == limit) {
            enough = true;
            return absl::CancelledError("enough cells");  // stops the query; not an error
          }
          return absl::OkStatus();
        },
        incoming);
  });
  return enough ? absl::OkStatus() : st;
}

absl::StatusOr<std::vector<NodeStatRow>> Store::ReadNodeStats(int64_t run_key) {
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<NodeStatRow> out;
  GDR_RETURN_IF_ERROR(db->Query(
      absl::StrCat("SELECT ", kStatCols, " FROM node_stats s WHERE s.run = ? ORDER BY s.node, s.rail"),
      {run_key}, [&](const SqlRow& x) {
        out.push_back(ReadNodeStat(x, 0));
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<std::vector<LinkPoint>> Store::LinkTrend(const std::string& cluster, int64_t src, int64_t dst,
                                                        uint32_t rail, uint64_t size_bytes, int64_t since_us,
                                                        uint32_t limit) {
  // Per run one primary-key lookup; with size 0 the verdict size comes from
  // the source's node_stats row of that run and rail. Runs stored before
  // schema version 6 have cell rows, the others the source's block: both
  // are read, newest first, and merged.
  const std::string from_rows =
      size_bytes
          ? absl::StrCat("SELECT r.run_id, r.started_us, ", kCellCols,
                         " FROM runs r JOIN cells c ON c.run = r.id AND c.rail = ? AND "
                         "c.size_bytes = ? AND c.src = ? AND c.dst = ? "
                         "WHERE r.cluster = ? AND r.started_us >= ? "
                         "ORDER BY r.started_us DESC, r.id DESC LIMIT ?")
          : absl::StrCat("SELECT r.run_id, r.started_us, ", kCellCols,
                         " FROM runs r JOIN node_stats s ON s.run = r.id AND s.node = ? AND s.rail = ? "
                         "JOIN cells c ON c.run = r.id AND c.rail = s.rail AND "
                         "c.size_bytes = s.size_bytes AND c.src = s.node AND c.dst = ? "
                         "WHERE r.cluster = ? AND r.started_us >= ? "
                         "ORDER BY r.started_us DESC, r.id DESC LIMIT ?");
  std::vector<SqlValue> params;
  if (size_bytes) {
    params = {int64_t{rail}, static_cast<int64_t>(size_bytes), src, dst};
  } else {
    params = {src, int64_t{rail}, dst};
  }
  params.push_back(std::string_view(cluster));
  params.push_back(since_us);
  params.push_back(int64_t{limit});
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<LinkPoint> rows;
  GDR_RETURN_IF_ERROR(db->Query(from_rows, params, [&](const SqlRow& x) {
    rows.push_back({x.Text(0), x.Int(1), ReadCell(x, 2)});
    return absl::OkStatus();
  }));
  GDR_ASSIGN_OR_RETURN(std::vector<LinkPoint> blocks,
                       LinkTrendOfBlocks(*db, cluster, src, dst, rail, size_bytes, since_us, limit));
  if (rows.empty()) return blocks;
  if (blocks.empty()) return rows;
  std::vector<LinkPoint> out;
  auto newer = [](const LinkPoint& a, const LinkPoint& b) {
    return std::make_pair(a.started_us, a.cell.run) > std::make_pair(b.started_us, b.cell.run);
  };
  std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
             std::make_move_iterator(blocks.begin()), std::make_move_iterator(blocks.end()),
             std::back_inserter(out), newer);
  if (out.size() > limit) out.resize(limit);
  return out;
}

absl::StatusOr<std::vector<LinkPoint>> Store::LinkTrendOfBlocks(SqlDb& db, const std::string& cluster,
                                                                int64_t src, int64_t dst, uint32_t rail,
                                                                uint64_t size_bytes, int64_t since_us,
                                                                uint32_t limit) {
  const std::string join =
      size_bytes ? "JOIN cell_blocks b ON b.run = r.id AND b.rail = ? AND b.size_bytes = ? AND b.src = ? "
                 : "JOIN node_stats s ON s.run = r.id AND s.node = ? AND s.rail = ? "
                   "JOIN cell_blocks b ON b.run = r.id AND b.rail = s.rail AND b.size_bytes = s.size_bytes "
                   "AND b.src = s.node ";
  std::vector<LinkPoint> out;
  // A block without the link's cell (a matrix that left it out) gives no
  // point: pages of runs are read until `limit` points or no more runs.
  std::optional<std::pair<int64_t, int64_t>> after;
  for (;;) {
    std::vector<SqlValue> params;
    if (size_bytes) {
      params = {int64_t{rail}, static_cast<int64_t>(size_bytes), src};
    } else {
      params = {src, int64_t{rail}};
    }
    params.push_back(std::string_view(cluster));
    params.push_back(since_us);
    std::string page;
    if (after) {
      page = "AND (r.started_us < ? OR (r.started_us = ? AND r.id < ?)) ";
      params.push_back(after->first);
      params.push_back(after->first);
      params.push_back(after->second);
    }
    const uint32_t want = limit - static_cast<uint32_t>(out.size());
    params.push_back(int64_t{want});
    const std::string sql = absl::StrCat(
        "SELECT r.run_id, r.started_us, r.id, b.rail, b.size_bytes, b.encoding, b.data FROM runs r ", join,
        "WHERE r.cluster = ? AND r.started_us >= ? ", page, "ORDER BY r.started_us DESC, r.id DESC LIMIT ?");
    uint32_t runs = 0;
    GDR_RETURN_IF_ERROR(db.Query(sql, params, [&](const SqlRow& x) {
      ++runs;
      after = {x.Int(1), x.Int(2)};
      CellRecord key;
      key.run = x.Int(2);
      key.rail = static_cast<uint32_t>(x.Int(3));
      key.size_bytes = static_cast<uint64_t>(x.Int(4));
      key.src = src;
      std::optional<CellRecord> found;
      absl::Status st = DecodeCellBlock(x.Int(5), x.Bytes(6), key, [&](const CellRecord& c) {
        if (c.dst < dst) return absl::OkStatus();
        if (c.dst == dst) found = c;
        return absl::CancelledError("past the link");  // blocks are in dst order
      });
      if (!st.ok() && !absl::IsCancelled(st)) return st;
      if (found) out.push_back({x.Text(0), x.Int(1), *std::move(found)});
      return absl::OkStatus();
    }));
    if (runs < want || out.size() >= limit) break;
  }
  return out;
}

absl::StatusOr<std::vector<NodePoint>> Store::NodeTrend(const std::string& cluster, int64_t node,
                                                        std::optional<uint32_t> rail, int64_t since_us,
                                                        uint32_t limit) {
  // The last `limit` runs, then their rows (one per rail).
  std::vector<SqlValue> params = {std::string_view(cluster), since_us, node};
  std::string rail_clause;
  if (rail) {
    rail_clause = " AND s.rail = ?";
    params.push_back(int64_t{*rail});
  }
  params.push_back(int64_t{limit});
  std::string sql = absl::StrCat(
      "SELECT r.run_id, r.started_us, ", kStatCols,
      " FROM (SELECT id, run_id, started_us FROM runs WHERE cluster = ? AND started_us >= ? "
      "AND EXISTS (SELECT 1 FROM node_stats s WHERE s.run = runs.id AND s.node = ?",
      rail_clause,
      ") ORDER BY started_us DESC, id DESC LIMIT ?) r JOIN node_stats s ON s.run = r.id AND s.node = ?",
      rail_clause, " ORDER BY r.started_us DESC, r.id DESC, s.rail");
  params.push_back(node);
  if (rail) params.push_back(int64_t{*rail});
  GDR_ASSIGN_OR_RETURN(Lease db, Acquire());
  std::vector<NodePoint> out;
  GDR_RETURN_IF_ERROR(db->Query(sql, params, [&](const SqlRow& x) {
    out.push_back({x.Text(0), x.Int(1), ReadNodeStat(x, 2)});
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace gdrbench::server::store
