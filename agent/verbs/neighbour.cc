#include "agent/verbs/neighbour.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status.h"
#include "common/stopwatch.h"
#include "common/unique_fd.h"

namespace gdrbench::agent::verbs {
namespace {

// The RFC 863 discard port: nothing is expected to answer but the kernel's
// "port unreachable", and the datagram's only purpose is the resolution.
constexpr uint16_t kDiscardPort = 9;
constexpr int kPollMs = 5;
constexpr int kResendMs = 200;

bool ParseHex(absl::string_view s, uint32_t* out) {
  if (!absl::ConsumePrefix(&s, "0x")) return false;
  return !s.empty() && absl::SimpleHexAtoi(s, out);
}

}  // namespace

absl::StatusOr<std::vector<ArpEntry>> ParseProcNetArp(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty() || !absl::StartsWith(lines.front(), "IP address")) {
    return absl::InvalidArgumentError("/proc/net/arp: no 'IP address ...' header line");
  }
  std::vector<ArpEntry> out;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    ArpEntry e;
    in_addr a{};
    if (f.size() != 6 || !ParseHex(f[1], &e.hw_type) || !ParseHex(f[2], &e.flags) ||
        inet_pton(AF_INET, std::string(f[0]).c_str(), &a) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("/proc/net/arp line ", i + 1, " is not 'IP HWtype Flags HWaddr Mask Device': '",
                       lines[i], "'"));
    }
    e.ip = std::string(f[0]);
    e.hw_address = std::string(f[3]);
    e.device = std::string(f[5]);
    out.push_back(std::move(e));
  }
  return out;
}

bool ArpComplete(const std::vector<ArpEntry>& entries, absl::string_view ip,
                 absl::string_view device) {
  for (const ArpEntry& e : entries) {
    if (e.ip == ip && e.device == device && (e.flags & kArpFlagComplete) != 0) return true;
  }
  return false;
}

std::optional<std::string> MappedIpv4(const std::array<uint8_t, 16>& g) {
  for (int i = 0; i < 10; ++i) {
    if (g[i] != 0) return std::nullopt;
  }
  if (g[10] != 0xff || g[11] != 0xff) return std::nullopt;
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, g.data() + 12, buf, sizeof(buf));
  return std::string(buf);
}

absl::StatusOr<std::vector<RouteEntry>> ParseProcNetRoute(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.empty() || !absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[0]), "Iface")) {
    return absl::InvalidArgumentError("/proc/net/route: no header line");
  }
  std::vector<RouteEntry> out;
  auto hex = [](absl::string_view s, uint32_t* v) {
    return absl::SimpleHexAtoi(s, v);
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], absl::ByAnyChar(" \t"), absl::SkipEmpty());
    RouteEntry e;
    if (f.size() < 8 || !hex(f[1], &e.dest) || !hex(f[2], &e.gateway) || !hex(f[3], &e.flags) ||
        !absl::SimpleAtoi(f[6], &e.metric) || !hex(f[7], &e.mask)) {
      return absl::InvalidArgumentError(absl::StrCat("/proc/net/route: cannot read line ", i + 1,
                                                     ": '", lines[i], "'"));
    }
    e.device = std::string(f[0]);
    out.push_back(std::move(e));
  }
  return out;
}

std::string NextHop(const std::vector<RouteEntry>& routes, absl::string_view ip,
                    absl::string_view device) {
  in_addr a{};
  if (inet_pton(AF_INET, std::string(ip).c_str(), &a) != 1) return std::string(ip);
  const uint32_t raw = a.s_addr;  // network order, as the table's values
  const RouteEntry* best = nullptr;
  for (const RouteEntry& r : routes) {
    if (r.device != device || (raw & r.mask) != r.dest) continue;
    const int bits = __builtin_popcount(r.mask);
    if (best == nullptr || bits > __builtin_popcount(best->mask) ||
        (bits == __builtin_popcount(best->mask) && r.metric < best->metric)) {
      best = &r;
    }
  }
  if (best == nullptr || (best->flags & kRouteFlagGateway) == 0 || best->gateway == 0) {
    return std::string(ip);
  }
  in_addr gw{};
  gw.s_addr = best->gateway;
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &gw, buf, sizeof(buf));
  return buf;
}

absl::StatusOr<NeighbourWarmup> WarmNeighbour(const FsRoot& fs, const std::string& netdev,
                                              const std::array<uint8_t, 16>& local_gid,
                                              const std::array<uint8_t, 16>& remote_gid,
                                              int budget_ms) {
  NeighbourWarmup w;
  std::optional<std::string> remote = MappedIpv4(remote_gid);
  std::optional<std::string> local = MappedIpv4(local_gid);
  if (!remote || !local || netdev.empty()) {
    w.detail = "no IPv4-mapped RoCE GID on both ends: nothing to resolve";
    return w;
  }
  // The entry to wait for: the next hop's (a routed peer's own never appears).
  std::string hop = *remote;
  if (auto routes = fs.ReadFile("/proc/net/route"); routes.ok()) {
    if (auto table = ParseProcNetRoute(*routes); table.ok()) hop = NextHop(*table, *remote, netdev);
  }
  auto complete = [&]() -> absl::StatusOr<bool> {
    GDR_ASSIGN_OR_RETURN(std::string text, fs.ReadFile("/proc/net/arp"));
    GDR_ASSIGN_OR_RETURN(std::vector<ArpEntry> entries, ParseProcNetArp(text));
    return ArpComplete(entries, hop, netdev);
  };
  GDR_ASSIGN_OR_RETURN(bool done, complete());
  if (done) {
    w.resolved = true;
    w.detail = absl::StrCat("neighbour ", hop, hop == *remote ? "" : absl::StrCat(" (gateway to ", *remote, ")"),
                            " on ", netdev, " already resolved");
    return w;
  }
  w.needed = true;
  const std::string what = absl::StrCat(*local, " -> ", *remote, ":", kDiscardPort, " on ", netdev);
  UniqueFd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) return ErrnoToStatus(errno, absl::StrCat("socket(AF_INET, SOCK_DGRAM) for ", what));
  if (setsockopt(s.get(), SOL_SOCKET, SO_BINDTODEVICE, netdev.c_str(),
                 static_cast<socklen_t>(netdev.size())) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("setsockopt(SO_BINDTODEVICE) for ", what));
  }
  sockaddr_in src{};
  src.sin_family = AF_INET;
  std::memcpy(&src.sin_addr, local_gid.data() + 12, 4);
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("bind for ", what));
  }
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(kDiscardPort);
  std::memcpy(&dst.sin_addr, remote_gid.data() + 12, 4);
  const Stopwatch watch;
  int64_t next_send = 0;
  const char byte = 0;
  while (true) {
    if (watch.ms() >= next_send) {
      // A refused (ICMP port unreachable) earlier datagram shows up as
      // ECONNREFUSED on an unconnected socket only with IP_RECVERR; a send
      // error is still worth a retry within the budget, not a failure.
      if (sendto(s.get(), &byte, 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) == 1) {
        ++w.datagrams;
      } else if (w.datagrams == 0 && errno != EAGAIN && errno != ECONNREFUSED) {
        return ErrnoToStatus(errno, absl::StrCat("sendto ", what));
      }
      next_send += kResendMs;
    }
    GDR_ASSIGN_OR_RETURN(done, complete());
    w.waited_ms = watch.ms();
    if (done || w.waited_ms >= budget_ms) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  w.resolved = done;
  w.detail = absl::StrCat("neighbour ", hop, hop == *remote ? "" : absl::StrCat(" (gateway to ", *remote, ")"),
                          " on ", netdev,
                          done ? " resolved in " : " still unresolved after ", w.waited_ms, " ms (",
                          w.datagrams, " discard-port datagram(s) from ", *local, ")");
  return w;
}

}  // namespace gdrbench::agent::verbs
