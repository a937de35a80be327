// A v1.SweepSpec, what `gdrbench sweep` and POST /api/v1/sweeps ask for, as
// the sweep's config: the one place a sweep request is read, its typed
// fields and the deprecated string fields of the previous version alike.
//
//   v1::SweepSpec spec;                            // from flags or a request
//   spec.set_sweep_mode(v1::SWEEP_MODE_QUICK);
//   absl::StatusOr<SweepConfig> c = ConfigFromSpec(spec);
//   c->inventory = ...;                            // then the caller's part
//
// Unset fields take the defaults of common/sweep_limits.h; the spec's
// `params` and `policy`, when given, are complete (validated as given). The
// caller fills what a request does not carry: the inventory, the pair list
// of mode pairs, the baseline, TLS and timeouts, the journal, retries, the
// schedule seed, the link-rate override, the NIC choice. Pure, thread-safe.
//
// Errors, all INVALID_ARGUMENT naming the field (`names` for the typed
// ones, kLegacySpecFields for the deprecated ones) and its bounds:
//   a deprecated field beside the typed field that replaces it (mode and
//   sweep_mode, memory and memory_kinds, sizes/iterations/duration_s/qps/
//   bidirectional/verify/cm and params, min_link_fraction/mad_k/
//   fleet_min_drop and policy); an enum value outside its enum; params past
//   the agent's bounds (params.h ValidateParams), without iterations and
//   duration, with memory, inline_size or a test other than write_bw;
//   policy fractions outside 0 .. 1, mad_k outside 0 .. 100, a baseline_run;
//   quick_rounds, retest_low or parallel out of bounds; fan_in without mode
//   incast or incast without fan_in. A fan_in past the node count, pairs
//   and memory kinds against the inventory are checked with the inventory
//   (PlanWithoutAgents, RunSweep).
#pragma once

#include "absl/status/statusor.h"
#include "controller/schedule/schedule.h"
#include "controller/sweep/params.h"
#include "controller/sweep/sweep.h"
#include "gdrbench/v1/controller.pb.h"

namespace gdrbench::controller::sweep {

absl::StatusOr<SweepConfig> ConfigFromSpec(const v1::SweepSpec& spec, const FieldNames& names = kSpecFields);

// SWEEP_MODE_QUICK <-> schedule::Mode::kQuick, ...; UNSPECIFIED is all-pairs.
v1::SweepMode ToSweepMode(schedule::Mode mode);
// INVALID_ARGUMENT naming `name` for a value outside the enum.
absl::StatusOr<schedule::Mode> FromSweepMode(v1::SweepMode mode, absl::string_view name);

}  // namespace gdrbench::controller::sweep
