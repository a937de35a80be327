// Connection management through librdmacm: address and route resolution
// with the NIC's own source address bound (on a node with several NICs, and
// in the lab where all addresses are local to one kernel, an unbound source
// lets the kernel pick another device), connect, listen and accept, and
// what rdma_cm chose (GID index and type, path MTU).
//
// Every wait has a timeout; events are copied and acknowledged at once, so
// destroying an id never blocks on an unacknowledged event.
// Thread safety: functions are reentrant; an id and its channel belong to one
// thread at a time.
#pragma once

#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/verbs/device_info.h"
#include "common/fs_root.h"

namespace gdrbench::agent::verbs {

// INVALID_ARGUMENT unless `ip` is a numeric IPv4 or IPv6 address.
absl::StatusOr<sockaddr_storage> ParseSockAddr(absl::string_view ip, uint16_t port);
std::string FormatSockAddr(const sockaddr* addr);

// The first IPv4 address of the netdev under `device` (via sysfs and
// getifaddrs). NOT_FOUND with the device named when it has none.
absl::StatusOr<std::string> DeviceIpv4(const FsRoot& fs, const std::string& device);
// The same from an already resolved device (device_info.h).
absl::StatusOr<std::string> DeviceIpv4(const DeviceInfo& device);

// A copy of one rdma_cm event. For CONNECT_REQUEST, `id` is a new id that
// the caller now owns (wrap it in CmIdPtr).
struct CmEvent {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  rdma_cm_id* id = nullptr;
  int status = 0;
  std::array<uint8_t, 64> private_data{};
  uint8_t private_data_len = 0;
};

// DEADLINE_EXCEEDED after `timeout_ms` without an event.
absl::StatusOr<CmEvent> NextCmEvent(rdma_event_channel* channel, int timeout_ms);
// Waits for `expected` on `id`; any other event type is an error naming both
// (e.g. REJECTED: nothing listening on the target port; UNREACHABLE).
absl::StatusOr<CmEvent> ExpectCmEvent(rdma_event_channel* channel, rdma_cm_event_type expected,
                                      int timeout_ms);

// The timeouts of successive rdma_resolve_addr attempts within a budget of
// `total_ms`: 50, 100, 200, 400, ... ms, doubling, the last one cut to what
// is left (a remainder under 50 ms is added to the attempt before it); one
// attempt of `total_ms` when the budget is under 50 ms; empty for <= 0.
// Why: on a first contact the kernel has no neighbour (ARP/ND) entry for the
// peer yet; the request that triggers the resolution can wait for its whole
// timeout although the entry becomes valid milliseconds later (measured in
// the lab: ~5 s per first test of a pair with one 10 s attempt). A fresh
// attempt finds the entry at once, so short first attempts bound the stall.
std::vector<int> ResolveAttemptTimeouts(int total_ms);

// rdma_resolve_addr `src` -> `dst` with the ResolveAttemptTimeouts(total_ms)
// schedule: an attempt that ends in ADDR_ERROR with ETIMEDOUT or ENODATA is
// made again with the next timeout; any other outcome ends it. The final
// error names both addresses, how many attempts over how long, and the last
// event. UNAVAILABLE for a failed resolution, DEADLINE_EXCEEDED when the
// channel gives no event at all.
absl::Status ResolveAddress(rdma_cm_id* id, rdma_event_channel* channel, const sockaddr_storage& src,
                            const sockaddr_storage& dst, int total_ms);

// Binds `src` as the source and resolves the address (ResolveAddress, within
// `timeout_ms` in all) and route of `dst`.
// Afterwards id->verbs is the local device that will carry the traffic.
absl::Status ResolveRoute(rdma_cm_id* id, rdma_event_channel* channel, const sockaddr_storage& src,
                          const sockaddr_storage& dst, int timeout_ms);

// RDMA_OPTION_ID_ACK_TIMEOUT on `id` (before connect / accept): the QP's
// local ACK timeout, 4.096 us x 2^timeout. The sweep passes perftest's 14
// (67 ms) unless told otherwise; rdma_cm would otherwise derive it from the
// path's packet lifetime (seconds on RoCE), which makes every lost packet
// cost seconds and the comparison unfair.
absl::Status SetAckTimeout(rdma_cm_id* id, uint8_t timeout);

// The hint for a REJECTED event of `status` (the IB CM reject reason): no
// listener, the target's own refusal, or the reason number.
std::string RejectHint(int status);

// RDMA_OPTION_ID_TOS on `id` (before the route is resolved; on a listener,
// before rdma_listen): the traffic class of its packets on RoCE (DSCP << 2),
// from which the NIC also picks the priority, and the IB path query's TClass.
absl::Status SetTos(rdma_cm_id* id, uint8_t tos);

// rdma_connect with `private_data` (<= 56 bytes for RC), then ESTABLISHED.
absl::Status Connect(rdma_cm_id* id, rdma_event_channel* channel, const void* private_data,
                     uint8_t private_data_len, int timeout_ms);

// What rdma_cm chose for a connected QP.
struct PathInfo {
  std::string device;
  uint32_t port = 0;
  int gid_index = -1;
  std::string gid;
  std::string gid_type;  // "RoCE v2", "IB/RoCE v1" (from sysfs); empty on IB
  uint32_t path_mtu_bytes = 0;
  std::string local_address;
  std::string remote_address;
};
absl::StatusOr<PathInfo> QueryPath(const FsRoot& fs, rdma_cm_id* id);

}  // namespace gdrbench::agent::verbs
