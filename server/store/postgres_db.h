// SqlDb over PostgreSQL through libpq (Debian's libpq-dev): for stores that
// several servers or users share. `conninfo` is a libpq connection URI or
// keyword string, e.g. postgresql:///gdrbench?host=/run/postgresql or
// postgresql://gdrbench@db.example:5432/gdrbench?sslmode=verify-full.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

// UNAVAILABLE with libpq's reason (password withheld) when it cannot connect.
absl::StatusOr<std::unique_ptr<SqlDb>> OpenPostgres(const std::string& conninfo);

// `conninfo` with any password replaced by "***", for logs and errors.
std::string RedactConninfo(const std::string& conninfo);

}  // namespace gdrbench::server::store
