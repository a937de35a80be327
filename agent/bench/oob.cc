#include "agent/bench/oob.h"

#include <arpa/inet.h>

#include <cstring>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gdrbench::agent::bench {
namespace {

bool IsV4Mapped(const std::array<uint8_t, 16>& g) {
  for (int i = 0; i < 10; ++i) {
    if (g[i] != 0) return false;
  }
  return g[10] == 0xff && g[11] == 0xff;
}

bool IsZero(const std::array<uint8_t, 16>& g) {
  for (uint8_t b : g) {
    if (b != 0) return false;
  }
  return true;
}

bool IsLinkLocal(const std::array<uint8_t, 16>& g) {
  if (IsV4Mapped(g)) return g[12] == 169 && g[13] == 254;
  return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

// The first `bits` bits of a and b are equal.
bool SamePrefix(const uint8_t* a, const uint8_t* b, uint32_t bits) {
  for (uint32_t i = 0; i < bits; ++i) {
    uint8_t m = static_cast<uint8_t>(0x80u >> (i % 8));
    if ((a[i / 8] & m) != (b[i / 8] & m)) return false;
  }
  return true;
}

// Local and remote share a subnet: for IPv4-mapped GIDs the local address's
// prefix over the 32 address bits, for IPv6 its prefix (64 when unknown).
bool SameSubnet(const GidCandidate& l, const GidCandidate& r) {
  bool v4 = IsV4Mapped(l.gid);
  if (v4 != IsV4Mapped(r.gid)) return false;
  if (v4) {
    uint32_t bits = l.prefix_length > 0 && l.prefix_length <= 32 ? l.prefix_length : 32;
    return SamePrefix(l.gid.data() + 12, r.gid.data() + 12, bits);
  }
  uint32_t bits = l.prefix_length > 0 && l.prefix_length <= 128 ? l.prefix_length : 64;
  return SamePrefix(l.gid.data(), r.gid.data(), bits);
}

std::string Describe(const std::vector<GidCandidate>& gids) {
  std::vector<std::string> parts;
  for (const GidCandidate& g : gids) {
    parts.push_back(absl::StrCat(g.index, " ", GidText(g.gid),
                                 g.type.empty() ? "" : absl::StrCat(" (", g.type, ")")));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

}  // namespace

std::string GidText(const std::array<uint8_t, 16>& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (IsV4Mapped(g)) {
    inet_ntop(AF_INET, g.data() + 12, buf, sizeof(buf));
    return absl::StrCat("::ffff:", buf);
  }
  inet_ntop(AF_INET6, g.data(), buf, sizeof(buf));
  return buf;
}

absl::StatusOr<std::array<uint8_t, 16>> ParseGid(const std::string& text) {
  std::vector<std::string> groups = absl::StrSplit(text, ':');
  std::array<uint8_t, 16> out{};
  if (groups.size() != 8) return absl::InvalidArgumentError(absl::StrCat("bad GID '", text, "'"));
  for (int i = 0; i < 8; ++i) {
    uint32_t v = 0;
    if (groups[i].size() != 4 || !absl::SimpleHexAtoi(groups[i], &v)) {
      return absl::InvalidArgumentError(absl::StrCat("bad GID '", text, "'"));
    }
    out[2 * i] = static_cast<uint8_t>(v >> 8);
    out[2 * i + 1] = static_cast<uint8_t>(v);
  }
  return out;
}

std::vector<GidCandidate> GidCandidates(const verbs::PortInfo& port) {
  std::vector<GidCandidate> out;
  for (const verbs::GidEntry& e : port.gids) {
    auto g = ParseGid(e.gid);
    if (!g.ok() || IsZero(*g)) continue;
    GidCandidate c{.index = e.index, .gid = *g, .type = e.type, .prefix_length = 0};
    // The prefix of the netdev address this GID carries.
    for (const std::string& cidr : port.ip_cidrs) {
      std::pair<std::string, std::string> ip_len = absl::StrSplit(cidr, '/');
      uint32_t len = 0;
      if (!absl::SimpleAtoi(ip_len.second, &len)) continue;
      std::array<uint8_t, 16> a{};
      in_addr v4{};
      if (inet_pton(AF_INET, ip_len.first.c_str(), &v4) == 1) {
        a[10] = a[11] = 0xff;
        std::memcpy(a.data() + 12, &v4, 4);
      } else if (inet_pton(AF_INET6, ip_len.first.c_str(), a.data()) != 1) {
        continue;
      }
      if (a == *g) c.prefix_length = len;
    }
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<GidChoice> ChooseGids(const std::vector<GidCandidate>& local,
                                     const std::vector<GidCandidate>& remote, bool roce,
                                     std::optional<uint32_t> forced) {
  auto find = [](const std::vector<GidCandidate>& v, uint32_t index) -> const GidCandidate* {
    for (const GidCandidate& g : v) {
      if (g.index == index) return &g;
    }
    return nullptr;
  };
  if (forced) {
    const GidCandidate* l = find(local, *forced);
    const GidCandidate* r = find(remote, *forced);
    if (l == nullptr || r == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          "GID index ", *forced, " is not populated on ", l == nullptr ? "this end" : "the peer",
          " (this end: ", Describe(local), "; peer: ", Describe(remote), ")"));
    }
    return GidChoice{.local_index = *forced, .remote_index = *forced, .remote_gid = r->gid,
                     .global = true, .reason = absl::StrCat("GID index ", *forced, " (given)")};
  }
  if (!roce) {
    // InfiniBand: the port GID (index 0); LID routing inside one subnet.
    const GidCandidate* l = find(local, 0);
    const GidCandidate* r = find(remote, 0);
    if (l == nullptr || r == nullptr) {
      return absl::NotFoundError("InfiniBand port without a GID at index 0");
    }
    bool global = !SamePrefix(l->gid.data(), r->gid.data(), 64);
    return GidChoice{.local_index = 0, .remote_index = 0, .remote_gid = r->gid, .global = global,
                     .reason = global ? "IB GID index 0, across subnets (GRH)"
                                      : "IB GID index 0, LID routing"};
  }
  // RoCE: RoCE v2 entries sharing a subnet, IPv4 before IPv6, global before
  // link-local, the lowest indices first. Ends in different IPv4 subnets (a
  // routed fabric: rails as separate subnets, /31s to the leaf) take their
  // IPv4 RoCE v2 GIDs, which a router forwards, before the link-local IPv6
  // ones they share: fe80::/10 is never forwarded (RFC 4291 2.5.6), so those
  // only reach a peer on the same link, where the IPv4 subnets would match.
  for (int pass = 0; pass < 4; ++pass) {
    for (const GidCandidate& l : local) {
      if (l.type != "RoCE v2") continue;
      bool v4 = IsV4Mapped(l.gid);
      if ((pass == 0 || pass == 2) && !v4) continue;
      if (pass == 1 && (v4 || IsLinkLocal(l.gid))) continue;
      if (pass == 3 && !(IsLinkLocal(l.gid) && !v4)) continue;
      for (const GidCandidate& r : remote) {
        if (r.type != "RoCE v2") continue;
        const bool routed = pass == 2;
        if (routed ? !IsV4Mapped(r.gid) : !SameSubnet(l, r)) continue;
        return GidChoice{
            .local_index = l.index,
            .remote_index = r.index,
            .remote_gid = r.gid,
            .global = true,
            .reason = absl::StrCat(routed ? "RoCE v2 IPv4 GIDs in different subnets (routed): "
                                          : "RoCE v2 GIDs in one subnet: ",
                                   GidText(l.gid), " (index ", l.index, ") -> ", GidText(r.gid), " (index ",
                                   r.index, ")")};
      }
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no RoCE v2 GIDs of the two ends share a subnet, nor do both have an IPv4 one (this end: ", Describe(local),
      "; peer: ", Describe(remote), "); give --gid-index"));
}

uint32_t RandomPsn() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return rng() & 0xffffff;
}

ibv_mtu MtuEnum(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

QpTransition InitAttributes(uint8_t port) {
  QpTransition t;
  t.attr.qp_state = IBV_QPS_INIT;
  t.attr.pkey_index = 0;
  t.attr.port_num = port;
  t.attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return t;
}

QpTransition RtrAttributes(const QpAddress& remote, const PathParams& p) {
  QpTransition t;
  t.attr.qp_state = IBV_QPS_RTR;
  uint32_t mtu = std::min(p.local_mtu_bytes, p.remote_mtu_bytes);
  t.attr.path_mtu = MtuEnum(mtu == 0 ? std::max(p.local_mtu_bytes, p.remote_mtu_bytes) : mtu);
  t.attr.dest_qp_num = remote.qpn;
  t.attr.rq_psn = remote.psn & 0xffffff;
  t.attr.max_dest_rd_atomic = 1;
  t.attr.min_rnr_timer = 12;
  t.attr.ah_attr.dlid = remote.lid;
  t.attr.ah_attr.sl = p.sl;
  t.attr.ah_attr.src_path_bits = 0;
  t.attr.ah_attr.port_num = p.port;
  if (p.gids.global) {
    t.attr.ah_attr.is_global = 1;
    std::memcpy(t.attr.ah_attr.grh.dgid.raw, p.gids.remote_gid.data(), 16);
    t.attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(p.gids.local_index);
    t.attr.ah_attr.grh.hop_limit = 0xff;
    t.attr.ah_attr.grh.traffic_class = p.traffic_class;
  }
  t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return t;
}

QpTransition RtsAttributes(const QpAddress& local, const PathParams& p) {
  QpTransition t;
  t.attr.qp_state = IBV_QPS_RTS;
  t.attr.sq_psn = local.psn & 0xffffff;
  t.attr.timeout = p.qp_timeout;
  t.attr.retry_cnt = 7;
  t.attr.rnr_retry = 7;
  t.attr.max_rd_atomic = 1;
  t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
           IBV_QP_MAX_QP_RD_ATOMIC;
  return t;
}

}  // namespace gdrbench::agent::bench
