// The text and JSON of a cover or shift plan (`gdrbench topology plan`).
#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "controller/topology/cover.h"
#include "controller/topology/fabric.h"
#include "controller/topology/route.h"

namespace gdrbench::controller::cli {

// Rounds beside the lower bound, per tier cables covered / total and the
// load per cable, the ECMP odds, and every cable left uncovered with why.
std::string PlanText(const topology::Fabric& fabric, const topology::FabricIndex& index,
                     const topology::CoverPlan& plan, const std::string& mode, const std::string& routing);

// The same as JSON, with every flow's source, destination and cables
// ("lower[port] -> upper[port]", tier, up or down).
absl::StatusOr<std::string> PlanJson(const topology::Fabric& fabric, const topology::FabricIndex& index,
                     const topology::CoverPlan& plan, const std::string& mode, const std::string& routing);

}  // namespace gdrbench::controller::cli
