// Conversions between the v1 sweep messages and agent/bench's plain structs,
// with the request validation of the data path RPCs (bad input becomes
// INVALID_ARGUMENT with one sentence). Thread-safe: no state.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/write_sweep.h"
#include "common/fs_root.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::agent::service {

// proto3 zeros mean "the default" (bench/sweep_options.h): qps 0 -> 1,
// tx_depth 0 -> 128, cq_moderation 0 -> min(100, tx depth), post_list 0 -> 1,
// iterations and duration both 0 -> 5000 iterations. Then bench::Validate.
absl::StatusOr<bench::SweepOptions> ToSweepOptions(const v1::SweepParams& params);

void ToProto(const bench::SizeOutcome& outcome, v1::SizeResult* out);

// INVALID_ARGUMENT unless `device` is non-empty, owned by this agent
// (`owned` empty = all) and present on the node.
absl::Status CheckDevice(const FsRoot& fs, const std::vector<std::string>& owned,
                         const std::string& device);

}  // namespace gdrbench::agent::service
