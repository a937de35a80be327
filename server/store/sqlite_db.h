// SqlDb over SQLite (the embedded default store): one file, WAL journal so
// readers never wait for the writer, foreign keys on, a busy timeout so a
// second connection waits for the write lock instead of failing.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

// Opens (creating) the database file. UNAVAILABLE naming the path when it
// cannot be opened (missing folder, permissions).
absl::StatusOr<std::unique_ptr<SqlDb>> OpenSqlite(const std::string& path);

}  // namespace gdrbench::server::store
