// The inventory's qos: section: the service level and traffic class every
// test of the sweep uses unless --sl / --tclass say otherwise
// (docs/inventory.md; bounds from common/sweep_limits.h).
#include "common/status.h"
#include "common/sweep_limits.h"
#include "controller/inventory/yaml_fields.h"

namespace gdrbench::controller::inventory {

absl::StatusOr<Qos> GetQos(const Ctx& ctx, const YAML::Node& n) {
  GDR_RETURN_IF_ERROR(CheckKeys(ctx, n, "qos", {"sl", "tclass"}));
  Qos q;
  if (n["sl"]) {
    GDR_ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n["sl"], "qos.sl", sweep_limits::kMaxServiceLevel));
    q.sl = static_cast<uint32_t>(v);
  }
  if (n["tclass"]) {
    GDR_ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n["tclass"], "qos.tclass", sweep_limits::kMaxTrafficClass));
    q.tclass = static_cast<uint32_t>(v);
  }
  return q;
}

}  // namespace gdrbench::controller::inventory
