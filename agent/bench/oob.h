// The out-of-band connection mode's logic, pure (no hardware): which GIDs
// the two ends use, and the attributes that bring an RC QP from INIT to RTR
// and RTS with what the peer told us through gRPC (its QPN, PSN, LID, GID),
// with perftest's values (ctx_modify_qp_to_rtr/_rts in perftest_resources.c:
// min RNR timer 12, retry count 7, RNR retry 7, hop limit 0xff (perftest sets
// grh.hop_limit = 0xFF in ctx_modify_qp_to_rtr; its DEF_HOP_LIMIT 64 is for UD),
// one outstanding RDMA read/atomic each way, path MTU = the smaller active MTU).
// Thread-safe: no state.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/verbs/device_info.h"

namespace gdrbench::agent::bench {

// One GID table entry as the ends exchange it.
struct GidCandidate {
  uint32_t index = 0;
  std::array<uint8_t, 16> gid{};
  std::string type;            // "RoCE v2", "IB/RoCE v1" ("" on InfiniBand)
  uint32_t prefix_length = 0;  // of the netdev address the GID carries (RoCE), 0 unknown
};

// The GIDs of a port for the exchange: every populated entry, with the
// prefix length of the netdev address it carries (from `port.ip_cidrs`).
std::vector<GidCandidate> GidCandidates(const verbs::PortInfo& port);

struct GidChoice {
  uint32_t local_index = 0;
  uint32_t remote_index = 0;
  std::array<uint8_t, 16> remote_gid{};
  bool global = false;   // a GRH is needed (RoCE always; IB only across subnets)
  std::string reason;    // how it was chosen, for the log and the result
};

// Chooses the GIDs of a connection, the initiator's side of the agreement
// (the target then uses remote_index as its own): with `forced` (the
// --gid-index override) that index on both ends; on RoCE a RoCE v2 GID of
// each end whose IPv4 (or, failing that, non-link-local IPv6) addresses
// share a subnet, the prefix taken from the local address; else (a routed
// fabric) an IPv4 RoCE v2 GID of each end; else link-local IPv6; on InfiniBand
// index 0 and LID routing unless the subnet prefixes differ.
// NOT_FOUND with both tables described when no pair fits.
absl::StatusOr<GidChoice> ChooseGids(const std::vector<GidCandidate>& local,
                                     const std::vector<GidCandidate>& remote, bool roce,
                                     std::optional<uint32_t> forced);

// "::ffff:10.0.0.1" style text of a GID (IPv4-mapped shown as IPv4) and the
// colon-hex form "0000:...:0a00:0001" sysfs uses.
std::string GidText(const std::array<uint8_t, 16>& gid);
absl::StatusOr<std::array<uint8_t, 16>> ParseGid(const std::string& colon_hex);

// What one end tells the other about one QP (and its port).
struct QpAddress {
  uint32_t qpn = 0;
  uint32_t psn = 0;   // 24 bits: the first PSN this QP sends
  uint16_t lid = 0;
};

struct PathParams {
  uint8_t port = 1;
  uint32_t local_mtu_bytes = 0;   // active MTU of each end
  uint32_t remote_mtu_bytes = 0;
  uint8_t qp_timeout = 14;        // 4.096 us x 2^N
  uint8_t sl = 0;                 // ah_attr.sl (perftest -S)
  uint8_t traffic_class = 0;      // grh.traffic_class (perftest --tclass)
  GidChoice gids;
};

// A random 24-bit PSN, as perftest's lrand48() & 0xffffff.
uint32_t RandomPsn();
// The IB MTU enum of a byte count (256 .. 4096); IBV_MTU_1024 for unknown.
ibv_mtu MtuEnum(uint32_t bytes);

struct QpTransition {
  ibv_qp_attr attr{};
  int mask = 0;
};
QpTransition InitAttributes(uint8_t port);
QpTransition RtrAttributes(const QpAddress& remote, const PathParams& path);
QpTransition RtsAttributes(const QpAddress& local, const PathParams& path);

}  // namespace gdrbench::agent::bench
