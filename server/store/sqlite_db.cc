#include "server/store/sqlite_db.h"

#include <sqlite3.h>

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::store {
namespace {

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* s) : s_(s) {}
  Statement(Statement&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~Statement() {
    if (s_ != nullptr) sqlite3_finalize(s_);
  }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

class Row final : public SqlRow {
 public:
  explicit Row(sqlite3_stmt* s) : s_(s) {}
  bool IsNull(int c) const override { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  int64_t Int(int c) const override { return sqlite3_column_int64(s_, c); }
  double Real(int c) const override { return sqlite3_column_double(s_, c); }
  std::string Text(int c) const override {
    const unsigned char* t = sqlite3_column_text(s_, c);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t),
                                                      sqlite3_column_bytes(s_, c));
  }
  std::string Bytes(int c) const override {
    const void* b = sqlite3_column_blob(s_, c);
    return b == nullptr ? std::string()
                        : std::string(static_cast<const char*>(b), sqlite3_column_bytes(s_, c));
  }

 private:
  sqlite3_stmt* s_;
};

class SqliteDb final : public SqlDb {
 public:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteDb() override {
    cache_.clear();
    if (int rc = sqlite3_close(db_); rc != SQLITE_OK) {
      spdlog::warn("sqlite {}: close: {}", path_, sqlite3_errstr(rc));
    }
  }

  Dialect dialect() const override { return Dialect::kSqlite; }
  std::string name() const override { return absl::StrCat("sqlite ", path_); }

  absl::Status ExecScript(std::string_view sql) override {
    char* err = nullptr;
    std::string text(sql);
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      absl::Status st = Error(sqlite3_extended_errcode(db_), err ? err : "error", sql);
      sqlite3_free(err);
      return st;
    }
    return absl::OkStatus();
  }

  absl::Status Exec(std::string_view sql, absl::Span<const SqlValue> params) override {
    return Query(sql, params, nullptr);
  }

  absl::Status Query(std::string_view sql, absl::Span<const SqlValue> params,
                     const RowFn& fn) override {
    auto stmt = Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    sqlite3_stmt* s = *stmt;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (auto st = Bind(s, params, sql); !st.ok()) return st;
    Row row(s);
    for (;;) {
      int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        absl::Status st = Error(sqlite3_extended_errcode(db_), sqlite3_errmsg(db_), sql);
        sqlite3_reset(s);
        return st;
      }
      if (fn) {
        if (absl::Status st = fn(row); !st.ok()) {
          sqlite3_reset(s);
          return st;
        }
      }
    }
    sqlite3_reset(s);
    return absl::OkStatus();
  }

  absl::Status Begin() override { return ExecScript("BEGIN IMMEDIATE"); }
  absl::Status Commit() override { return ExecScript("COMMIT"); }
  void Rollback() override {
    if (sqlite3_get_autocommit(db_)) return;
    if (auto st = ExecScript("ROLLBACK"); !st.ok()) spdlog::warn("{}", std::string(st.message()));
  }

  absl::StatusOr<std::unique_ptr<RowSink>> BulkRows(std::string_view table,
                                                    absl::Span<const BulkColumn> columns) override;

  absl::StatusOr<sqlite3_stmt*> Prepare(std::string_view sql) {
    std::string key(sql);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second.get();
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, key.data(), static_cast<int>(key.size()), &s, nullptr);
    if (rc != SQLITE_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat(name(), ": cannot prepare ", StatementHead(sql), ": ", sqlite3_errmsg(db_)));
    }
    sqlite3_stmt* raw = s;
    cache_.emplace(std::move(key), Statement(s));
    return raw;
  }

  absl::Status Error(int rc, const char* msg, std::string_view sql) const {
    std::string text = absl::StrCat(name(), ": ", StatementHead(sql), ": ", msg);
    if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return absl::AlreadyExistsError(text);
    }
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_CANTOPEN) {
      return absl::UnavailableError(text);
    }
    return absl::InternalError(text);
  }

 private:
  absl::Status Bind(sqlite3_stmt* s, absl::Span<const SqlValue> params, std::string_view sql) {
    for (size_t i = 0; i < params.size(); ++i) {
      const int k = static_cast<int>(i) + 1;
      int rc = std::visit(
          [&](const auto& v) -> int {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::nullptr_t>) {
              return sqlite3_bind_null(s, k);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              return sqlite3_bind_int64(s, k, v);
            } else if constexpr (std::is_same_v<T, double>) {
              return sqlite3_bind_double(s, k, v);
            } else if constexpr (std::is_same_v<T, std::string_view>) {
              return sqlite3_bind_text64(s, k, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
            } else {
              // A null pointer would bind NULL: an empty blob is a zero blob.
              if (v.bytes.empty()) return sqlite3_bind_zeroblob(s, k, 0);
              return sqlite3_bind_blob64(s, k, v.bytes.data(), v.bytes.size(), SQLITE_STATIC);
            }
          },
          params[i]);
      if (rc != SQLITE_OK) return Error(rc, sqlite3_errmsg(db_), sql);
    }
    return absl::OkStatus();
  }

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, Statement> cache_;
};

// One INSERT, prepared once (the statement cache), per row: SQLite runs in
// this process, so there is no round trip to save.
class InsertSink final : public RowSink {
 public:
  InsertSink(SqliteDb* db, std::string sql, size_t columns)
      : db_(db), sql_(std::move(sql)), columns_(columns) {}
  absl::Status Add(absl::Span<const SqlValue> row) override {
    if (row.size() != columns_) {
      return absl::InvalidArgumentError(absl::StrCat(db_->name(), ": ", StatementHead(sql_), ": a row of ",
                                                     row.size(), " values for ", columns_, " columns"));
    }
    return db_->Exec(sql_, row);
  }
  absl::Status Finish() override { return absl::OkStatus(); }

 private:
  SqliteDb* db_;
  std::string sql_;
  size_t columns_;
};

absl::StatusOr<std::unique_ptr<RowSink>> SqliteDb::BulkRows(std::string_view table,
                                                            absl::Span<const BulkColumn> columns) {
  std::string names, marks;
  for (size_t i = 0; i < columns.size(); ++i) {
    absl::StrAppend(&names, i ? ", " : "", std::string(columns[i].name));
    absl::StrAppend(&marks, i ? ", " : "", "?");
  }
  std::string sql = absl::StrCat("INSERT INTO ", std::string(table), " (", names, ") VALUES (", marks, ")");
  if (auto st = Prepare(sql); !st.ok()) return st.status();
  return std::make_unique<InsertSink>(this, std::move(sql), columns.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqlDb>> OpenSqlite(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat("sqlite ", path, ": cannot open: ", msg));
  }
  auto out = std::make_unique<SqliteDb>(db, path);
  sqlite3_busy_timeout(db, 60000);
  // WAL: readers see the last commit while a (long) ingest writes; NORMAL
  // sync is durable across process crashes, and across power loss up to the
  // last checkpoint (https://www.sqlite.org/wal.html).
  absl::Status st = out->ExecScript(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
      "PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;");
  if (!st.ok()) return absl::UnavailableError(st.message());
  return out;
}

}  // namespace gdrbench::server::store
