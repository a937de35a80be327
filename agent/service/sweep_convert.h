// Conversions between the v1 sweep messages and agent/bench's plain structs,
// with the request validation of the data path RPCs (bad input becomes
// INVALID_ARGUMENT with one sentence). Thread-safe: no state.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/counters/port_counters.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/session.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "agent/verbs/device_info.h"
#include "common/fs_root.h"
#include "gdrbench/v1/sweep.pb.h"

namespace gdrbench::agent::service {

// proto3 zeros mean "the default" (common/sweep_limits.h): qps 0 -> 1,
// tx_depth 0 -> 128, cq_moderation 0 -> min(100, tx depth), post_list 0 -> 1,
// iterations and duration both 0 -> 5000 iterations (write_lat: 1000),
// qp_timeout 0 -> 14, inline_size unset -> 220 for write_lat. Then
// bench::Validate.
absl::StatusOr<bench::SweepOptions> ToSweepOptions(const v1::SweepParams& params);

void ToProto(const bench::SizeOutcome& outcome, v1::SizeResult* out);

bench::CmMode FromProto(v1::ConnectionMode m);
v1::ConnectionMode ToProto(bench::CmMode m);
void ToProto(const bench::OobEndpoint& e, v1::OobEndpoint* out);
absl::StatusOr<bench::OobEndpoint> FromProto(const v1::OobEndpoint& e);
void ToProto(const bench::OobPeer& p, const std::string& gid_choice, v1::OobConnect* out);
absl::StatusOr<bench::OobPeer> FromProto(const v1::OobConnect& c);
// A port's counters around a test: the delta of two samples.
void ToProto(const counters::Delta& d, v1::PortCounters* out);

// Memory a test cannot use, before anything is allocated: write_lat polls
// the receive area with the CPU, which GPU memory does not allow (perftest:
// "doesn't support device memory latency test with write"). UNIMPLEMENTED.
absl::Status CheckMemoryForTest(const memory::MemorySpec& memory, const bench::SweepOptions& o);

// INVALID_ARGUMENT unless `device` is non-empty, owned by this agent
// (`owned` empty = all) and present on the node; returns it, resolved once
// for the whole test (ports, GIDs, addresses, NUMA node).
absl::StatusOr<verbs::DeviceInfo> CheckDevice(bench::SessionFactory& sessions,
                                              const std::vector<std::string>& owned,
                                              const std::string& device);

}  // namespace gdrbench::agent::service
