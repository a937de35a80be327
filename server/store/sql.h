// The SQL seam under the store: one connection to SQLite or PostgreSQL,
// with parameters bound by position (`?` in the SQL text; the PostgreSQL
// connection renumbers them $1..$n) and rows read by column index. The store
// (store.h) is written once over this; each backend only connects,
// binds and reads rows.
//
// Errors: INVALID_ARGUMENT for SQL the database refuses to prepare,
// ALREADY_EXISTS for a unique-key violation, UNAVAILABLE when the database
// cannot be reached, INTERNAL otherwise; messages name the backend and the
// failing statement's first words.
// Thread safety: a connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace gdrbench::server::store {

// A BLOB (SQLite) / BYTEA (PostgreSQL) parameter.
struct Blob {
  std::string_view bytes;
};

using SqlValue = std::variant<std::nullptr_t, int64_t, double, std::string_view, Blob>;

class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Real(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual std::string Bytes(int col) const = 0;  // a BLOB / BYTEA column
};

// One cell of a run (a row of the cells table before schema version 6, a
// cell of a block since: cell_block.h).
struct CellRecord {
  int64_t run = 0;
  uint32_t rail = 0;
  uint64_t size_bytes = 0;
  int64_t src = 0;  // nodes.id
  int64_t dst = 0;
  int status = 0;   // v1::ResultStatus
  double bw_avg_gbps = 0;
  int verdict = 0;  // 0 none, 1 pass, 2 low, 3 fail
  // The rest of v1.MatrixCell, so a run reads back whole.
  double expected_gbps = 0;
  double baseline_gbps = 0;
  std::string reason;
};

// A column of a bulk load, with its type: PostgreSQL's binary COPY sends
// each value in its column's own wire format (pg_copy.h).
enum class ColumnType { kInt16, kInt32, kInt64, kFloat64, kText, kBytes };
struct BulkColumn {
  std::string_view name;
  ColumnType type;
};

// Appends rows to one table inside the open transaction; no other statement
// runs on the connection until Finish.
class RowSink {
 public:
  virtual ~RowSink() = default;
  // One value per column; INVALID_ARGUMENT when they do not fit the columns.
  virtual absl::Status Add(absl::Span<const SqlValue> row) = 0;
  // Everything added is in the table (before Commit); ALREADY_EXISTS for a
  // unique-key violation.
  virtual absl::Status Finish() = 0;
};

enum class Dialect { kSqlite, kPostgres };

class SqlDb {
 public:
  using RowFn = std::function<absl::Status(const SqlRow&)>;
  virtual ~SqlDb() = default;
  virtual Dialect dialect() const = 0;
  // Several statements, no parameters (migrations).
  virtual absl::Status ExecScript(std::string_view sql) = 0;
  virtual absl::Status Exec(std::string_view sql, absl::Span<const SqlValue> params = {}) = 0;
  // Calls `row` for every result row; a non-OK return stops and is returned.
  virtual absl::Status Query(std::string_view sql, absl::Span<const SqlValue> params,
                             const RowFn& row) = 0;
  // A write transaction (SQLite: BEGIN IMMEDIATE, so the write lock is taken now).
  virtual absl::Status Begin() = 0;
  virtual absl::Status Commit() = 0;
  virtual void Rollback() = 0;  // logs a failure, never fails the caller
  // Bulk load of `table` (SQLite: a prepared INSERT per row; PostgreSQL:
  // COPY ... FROM STDIN (FORMAT binary)). A sink dropped before Finish
  // leaves the transaction to be rolled back.
  virtual absl::StatusOr<std::unique_ptr<RowSink>> BulkRows(std::string_view table,
                                                            absl::Span<const BulkColumn> columns) = 0;
  virtual std::string name() const = 0;  // "sqlite /var/lib/x.db", "postgresql host=..."
};

// Reads one row's first column as an integer; NOT_FOUND when no row.
absl::StatusOr<int64_t> QueryInt(SqlDb& db, std::string_view sql,
                                 absl::Span<const SqlValue> params = {});

// The first words of a statement, for error messages.
std::string StatementHead(std::string_view sql);

}  // namespace gdrbench::server::store
