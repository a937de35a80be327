// libFuzzer: Slurm-style hostlists as --hostlist and inventories give them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "controller/inventory/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string expr(reinterpret_cast<const char*>(data), size);
  auto hosts = gdrbench::controller::inventory::ExpandHostlist(expr, 4096);
  if (hosts.ok() && hosts->size() > 4096) __builtin_trap();  // the cap holds
  return 0;
}
