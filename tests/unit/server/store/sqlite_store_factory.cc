#include <filesystem>

#include "server/store/sqlite_db.h"
#include "tests/unit/server/store/store_suite.h"

namespace gdrbench::server::testing {
namespace {

std::string PathFor(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gdrbench-store-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / (name + ".db")).string();
}

void Remove(const std::string& path) {
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
}

}  // namespace

absl::StatusOr<std::unique_ptr<store::Store>> OpenTestStore(const std::string& name) {
  std::string path = PathFor(name);
  Remove(path);
  return store::Store::Open(path);
}

absl::StatusOr<std::unique_ptr<store::SqlDb>> OpenEmptyTestDb(const std::string& name) {
  std::string path = PathFor(name);
  Remove(path);
  return store::OpenSqlite(path);
}

absl::StatusOr<std::unique_ptr<store::Store>> ReopenTestStore(const std::string& name) {
  return store::Store::Open(PathFor(name));
}

}  // namespace gdrbench::server::testing
