// The kernel's neighbour (ARP) entry of a RoCE peer, resolved before the
// first packet needs it.
//
// Why: a RoCE packet to a peer whose neighbour entry is not resolved yet is
// held or dropped while the kernel resolves it; on a first contact between
// two nodes the first packets of a test (the out-of-band mode's first RC
// SEND/WRITE after RTR) wait for a retransmission. rdma_cm resolves the
// neighbour itself (rdma_resolve_addr); the out-of-band mode builds its
// address vector from the peer's GID and so warms the entry here first, the
// way any UDP sender would: one datagram to the peer's address on the discard
// port (9), sent from the RDMA port's own netdev and source address (as rxe
// and RoCE NICs route), then a bounded wait until /proc/net/arp shows the
// entry complete.
// Thread safety: functions are reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/fs_root.h"

namespace gdrbench::agent::verbs {

// One row of /proc/net/arp.
struct ArpEntry {
  std::string ip;
  uint32_t hw_type = 0;
  uint32_t flags = 0;
  std::string hw_address;
  std::string device;
};

// ATF_COM (include/uapi/linux/if_arp.h): the entry has a hardware address
// (the kernel sets it for NUD_VALID states: REACHABLE, STALE, DELAY, PROBE,
// PERMANENT, NOARP).
inline constexpr uint32_t kArpFlagComplete = 0x02;

// Parses /proc/net/arp: a header line, then one row per entry, as
// net/ipv4/arp.c (arp_format_neigh_entry) prints it:
//   "%-16s 0x%-10x0x%-10x%-17s     *        %s\n"  (ip, hw type, flags,
//   hw address, mask, device). INVALID_ARGUMENT naming the line for a row
// that does not have that shape or a missing header.
absl::StatusOr<std::vector<ArpEntry>> ParseProcNetArp(absl::string_view text);

// The entry of `ip` on `device` carries kArpFlagComplete.
bool ArpComplete(const std::vector<ArpEntry>& entries, absl::string_view ip,
                 absl::string_view device);

// The IPv4 address an IPv4-mapped GID (::ffff:a.b.c.d) carries, dotted;
// nullopt for any other GID.
std::optional<std::string> MappedIpv4(const std::array<uint8_t, 16>& gid);

// One row of /proc/net/route, the IPv4 main table as net/ipv4/fib_trie.c
// (fib_route_seq_show) prints it: "%s\t%08X\t%08X\t%04X\t..." (iface,
// destination, gateway, flags, refcnt, use, metric, mask, ...). The
// addresses are the __be32 values printed as numbers, so `dest`, `gateway`
// and `mask` hold the network-order bytes as they sit in memory.
struct RouteEntry {
  std::string device;
  uint32_t dest = 0;
  uint32_t gateway = 0;
  uint32_t flags = 0;   // RTF_UP 0x1, RTF_GATEWAY 0x2
  uint32_t mask = 0;
  uint32_t metric = 0;
};
inline constexpr uint32_t kRouteFlagGateway = 0x2;

// INVALID_ARGUMENT naming the line for a row that does not have that shape
// or a missing header.
absl::StatusOr<std::vector<RouteEntry>> ParseProcNetRoute(absl::string_view text);

// The neighbour the kernel resolves to send to `ip` (dotted IPv4) out of
// `device`: the gateway of the longest-prefix route of that device when it
// is a gateway route (an off-link peer: routed RoCE), else `ip` itself.
// `ip` itself when no route of the device matches or `ip` does not parse.
std::string NextHop(const std::vector<RouteEntry>& routes, absl::string_view ip,
                    absl::string_view device);

struct NeighbourWarmup {
  bool needed = false;     // the GID carries an IPv4 address whose entry was not complete
  bool resolved = false;   // the entry is complete now (or was already)
  int64_t waited_ms = 0;
  int datagrams = 0;       // discard-port datagrams sent
  std::string detail;      // what happened, for the log
};

// Makes sure the neighbour entry of `remote_gid` on `netdev` (its next hop:
// the gateway for a peer in another subnet, NextHop over /proc/net/route,
// whose entry is the one the kernel needs; the peer's own never appears) is
// complete before traffic to it starts, waiting at most `budget_ms`: a no-op
// (needed = false) for a GID that carries no IPv4 address (InfiniBand, IPv6
// RoCE GIDs: not handled yet) and for an entry already complete; otherwise
// discard-port datagrams from `local_gid`'s address on `netdev`
// (SO_BINDTODEVICE; unprivileged since Linux 5.7), one every 200 ms, and
// /proc/net/arp (read through `fs`) polled every 5 ms. An entry still
// incomplete at the budget is not an error (resolved = false: the transport
// retries on its own). Errors: the socket calls' errno as a Status naming the
// call, the netdev and the address.
absl::StatusOr<NeighbourWarmup> WarmNeighbour(const FsRoot& fs, const std::string& netdev,
                                              const std::array<uint8_t, 16>& local_gid,
                                              const std::array<uint8_t, 16>& remote_gid,
                                              int budget_ms);

}  // namespace gdrbench::agent::verbs
