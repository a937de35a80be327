#include <filesystem>

#include "tests/unit/server/store/store_suite.h"

namespace gdrbench::server::testing {
namespace {

std::string PathFor(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gdrbench-store-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / (name + ".db")).string();
}

}  // namespace

absl::StatusOr<std::unique_ptr<store::Store>> OpenTestStore(const std::string& name) {
  std::string path = PathFor(name);
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  return store::Store::Open(path);
}

absl::StatusOr<std::unique_ptr<store::Store>> ReopenTestStore(const std::string& name) {
  return store::Store::Open(PathFor(name));
}

}  // namespace gdrbench::server::testing
