// A sweep's test parameters (v1::SweepParams) checked before any agent is
// called, and the text forms a person types: message sizes ("64K,1M"),
// connection modes ("oob"), memory kinds ("host,gpu"). Used by the CLI
// (`gdrbench pair`, `gdrbench sweep`) and by spec.h (gdrbench-server). The
// agent validates again (it trusts no controller); this catches a bad value
// before the probe, where every test would fail after it. Defaults and
// bounds: common/sweep_limits.h. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gdrbench/v1/controller.pb.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::controller::sweep {

// What each value is called in an error: the flags of the CLI, the fields
// of v1.SweepSpec (typed or deprecated). Every INVALID_ARGUMENT says the
// name, the value and the bound.
struct FieldNames {
  absl::string_view mode, fan_in, sizes, iterations, duration, warmup, qps, tx_depth, post_list,
      qp_timeout, cm, gid_index, test, memory, quick_rounds, retest_low, parallel, policy, sl, tclass;
};
// The typed fields of v1.SweepSpec: "sweep_mode", "params.qps", ...
extern const FieldNames kSpecFields;
// The deprecated string fields of v1.SweepSpec: "mode", "sizes", "qps", ...
extern const FieldNames kLegacySpecFields;
// The flags of `gdrbench sweep` and `gdrbench pair`: "--mode", "--qps", ...
extern const FieldNames kFlagNames;

// "all" (perftest -a: 2 B .. 8 MiB), a list "2,64K,1M" or a power-of-two
// range "2-8M"; K/M/G are powers of 1024. Ascending, without duplicates.
// INVALID_ARGUMENT with the accepted forms otherwise.
absl::StatusOr<std::vector<uint64_t>> ParseSizes(absl::string_view text);
// The list form ParseSizes reads back: {65536, 1048576} -> "64K,1M".
std::string FormatSizes(absl::Span<const uint64_t> sizes);

// Seconds per size (a flag, the deprecated duration_s) as duration_ns:
// INVALID_ARGUMENT "NAME X: give 0 .. 600 seconds per size" past the bound
// or for NaN.
absl::StatusOr<int64_t> DurationNs(double seconds, absl::string_view name);

// "auto", "rdma_cm", "oob"; INVALID_ARGUMENT naming `name` otherwise.
absl::StatusOr<v1::ConnectionMode> ParseConnectionMode(absl::string_view text, absl::string_view name);

// "host", "hugepage", "gpu", "gpu-staged" and their list ("host,gpu").
// INVALID_ARGUMENT for an empty item, a kind named twice or an unknown kind.
absl::StatusOr<std::vector<v1::MemoryKind>> ParseMemoryKinds(absl::string_view text);
// "host", ...; "" for UNSPECIFIED or a value outside the enum.
absl::string_view MemoryKindName(v1::MemoryKind kind);

// Every field of `params` against the agent's bounds and the sweep's rules:
// sizes 1 B .. 1 GiB (at most 64, ascending, no duplicates), at most one of
// iterations and duration_ns (neither: the agent's default iterations; a
// sweep's spec needs one, spec.h), warm-up and iterations at most 10^8, qps
// 1 .. 64, tx depth 1 .. 8192, post list 1 .. 64, QP timeout 1 .. 31, GID
// index 0 .. 255, cm and test within their enums, service level 0 .. 15 and
// not with cm RDMA_CM (rdma_cm takes it from the path or the traffic class;
// with cm AUTO the agent refuses it where it picks rdma_cm), traffic class
// 0 .. 255. INVALID_ARGUMENT "NAME VALUE: BOUND" with `names`.
absl::Status ValidateParams(const v1::SweepParams& params, const FieldNames& names);

}  // namespace gdrbench::controller::sweep
