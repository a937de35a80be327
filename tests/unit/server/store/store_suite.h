// The store test suite (store_suite_test.cc, store_blocks_suite_test.cc,
// live_runs_suite_test.cc) runs on each backend: the unit
// tier links it with sqlite_store_factory.cc (a file in a temporary folder),
// the integration tier with tests/integration/postgres_store_factory.cc (a
// real PostgreSQL 15 server the test starts). Each test gets an empty store.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/sql.h"
#include "server/store/store.h"

namespace gdrbench::server::testing {

// An empty, migrated store for the test `name`.
absl::StatusOr<std::unique_ptr<store::Store>> OpenTestStore(const std::string& name);
// A second handle on the same store (a server restarted).
absl::StatusOr<std::unique_ptr<store::Store>> ReopenTestStore(const std::string& name);
// The test's database emptied, as a bare connection with no schema (a store
// of an older server is made on it). Close every Store on it first.
absl::StatusOr<std::unique_ptr<store::SqlDb>> OpenEmptyTestDb(const std::string& name);

}  // namespace gdrbench::server::testing
