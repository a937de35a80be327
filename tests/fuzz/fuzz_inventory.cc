// libFuzzer: inventory YAML (and the hostlists and addresses inside it).
// dns: entries resolve through a resolver that knows no name (no network).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/limits.h"
#include "controller/inventory/inventory.h"

namespace {
class NoNames final : public gdrbench::controller::inventory::Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(absl::string_view) const override {
    return absl::NotFoundError("no such name (fuzzing)");
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static NoNames resolver;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto inv = gdrbench::controller::inventory::ParseInventoryYaml(text, "fuzz.yaml", resolver);
  if (inv.ok() && inv->nodes.size() > gdrbench::limits::kMaxNodes) __builtin_trap();
  return 0;
}
