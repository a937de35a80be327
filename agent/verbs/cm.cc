#include "agent/verbs/cm.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/verbs/device_info.h"
#include "agent/verbs/handles.h"
#include "common/status.h"
#include "common/stopwatch.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::verbs {

absl::StatusOr<sockaddr_storage> ParseSockAddr(absl::string_view ip, uint16_t port) {
  sockaddr_storage ss{};
  std::string s(ip);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, s.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return ss;
  }
  if (inet_pton(AF_INET6, s.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return ss;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", ip, "' is not a numeric IPv4 or IPv6 address"));
}

std::string FormatSockAddr(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr == nullptr) return "";
  if (addr->sa_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    return absl::StrCat(buf, ":", ntohs(a->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    return absl::StrCat("[", buf, "]:", ntohs(a->sin6_port));
  }
  return "";
}

absl::StatusOr<std::string> DeviceIpv4(const DeviceInfo& d) {
  for (const PortInfo& p : d.ports) {
    for (const std::string& ip : p.ip_addresses) {
      in_addr a{};
      if (inet_pton(AF_INET, ip.c_str(), &a) == 1) return ip;
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "RDMA device ", d.name,
      " has no IPv4 address on its netdev: rdma_cm needs one (give bind_address, or --cm oob)"));
}

absl::StatusOr<std::string> DeviceIpv4(const FsRoot& fs, const std::string& device) {
  std::string reason;
  GDR_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devs, ListDevices(fs, {device}, &reason));
  if (devs.empty()) return absl::NotFoundError(absl::StrCat("no RDMA device ", device, ": ", reason));
  return DeviceIpv4(devs.front());
}

absl::StatusOr<CmEvent> NextCmEvent(rdma_event_channel* channel, int timeout_ms) {
  pollfd pfd{channel->fd, POLLIN, 0};
  int rc = poll(&pfd, 1, timeout_ms);
  if (rc < 0) return ErrnoToStatus(errno, "poll on the rdma_cm event channel");
  if (rc == 0) {
    return absl::DeadlineExceededError(
        absl::StrCat("no rdma_cm event within ", timeout_ms, " ms"));
  }
  rdma_cm_event* ev = nullptr;
  if (rdma_get_cm_event(channel, &ev) != 0) return ErrnoToStatus(errno, "rdma_get_cm_event");
  CmEvent out;
  out.type = ev->event;
  out.id = ev->id;
  out.status = ev->status;
  if (ev->param.conn.private_data != nullptr && ev->param.conn.private_data_len > 0) {
    out.private_data_len =
        std::min<uint8_t>(ev->param.conn.private_data_len, out.private_data.size());
    std::memcpy(out.private_data.data(), ev->param.conn.private_data, out.private_data_len);
  }
  rdma_ack_cm_event(ev);
  return out;
}

absl::StatusOr<CmEvent> ExpectCmEvent(rdma_event_channel* channel, rdma_cm_event_type expected,
                                      int timeout_ms) {
  auto ev = NextCmEvent(channel, timeout_ms);
  if (!ev.ok()) {
    return absl::Status(ev.status().code(), absl::StrCat("waiting for ", rdma_event_str(expected),
                                                         ": ", ev.status().message()));
  }
  if (ev->type != expected) {
    std::string hint;
    if (ev->type == RDMA_CM_EVENT_REJECTED) {
      hint = RejectHint(ev->status);
    } else if (ev->type == RDMA_CM_EVENT_UNREACHABLE || ev->type == RDMA_CM_EVENT_ADDR_ERROR ||
               ev->type == RDMA_CM_EVENT_ROUTE_ERROR) {
      hint = " (no RDMA path between the two addresses)";
    }
    return absl::UnavailableError(absl::StrCat("expected rdma_cm event ", rdma_event_str(expected),
                                               ", got ", rdma_event_str(ev->type), " (status ",
                                               ev->status, ")", hint));
  }
  return ev;
}

std::vector<int> ResolveAttemptTimeouts(int total_ms) {
  constexpr int kFirstMs = 50;
  std::vector<int> out;
  if (total_ms <= 0) return out;
  if (total_ms < kFirstMs) return {total_ms};
  int left = total_ms;
  for (int t = kFirstMs; left > 0; t = t > (1 << 29) ? t : t * 2) {
    int take = std::min(t, left);
    if (take < kFirstMs && !out.empty()) {
      out.back() += take;
      break;
    }
    out.push_back(take);
    left -= take;
  }
  return out;
}

namespace {

// rdma_cm takes non-const sockaddr pointers it does not write through.
sockaddr* AsSockaddr(const sockaddr_storage& a) {
  return reinterpret_cast<sockaddr*>(const_cast<sockaddr_storage*>(&a));
}

// "10.0.0.1 -> 10.0.0.2", for errors.
std::string PathText(const sockaddr_storage& src, const sockaddr_storage& dst) {
  return absl::StrCat(FormatSockAddr(AsSockaddr(src)), " -> ", FormatSockAddr(AsSockaddr(dst)));
}

}  // namespace

absl::Status ResolveAddress(rdma_cm_id* id, rdma_event_channel* channel, const sockaddr_storage& src,
                            const sockaddr_storage& dst, int total_ms) {
  sockaddr* s = AsSockaddr(src);
  sockaddr* d = AsSockaddr(dst);
  const std::string what = PathText(src, dst);
  const std::vector<int> schedule = ResolveAttemptTimeouts(total_ms);
  const Stopwatch watch;
  std::string last = "no attempt (timeout budget 0 ms)";
  for (size_t i = 0; i < schedule.size(); ++i) {
    if (rdma_resolve_addr(id, s, d, schedule[i]) != 0) {
      return ErrnoToStatus(errno, absl::StrCat("rdma_resolve_addr ", what, " (attempt ", i + 1,
                                               ", timeout ", schedule[i], " ms)"));
    }
    // rdma_cm answers by the attempt's timeout; the extra second is slack
    // for a loaded host, not part of the schedule.
    auto ev = NextCmEvent(channel, schedule[i] + 1000);
    if (!ev.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "rdma_resolve_addr ", what, ": no rdma_cm event for attempt ", i + 1, " within ",
          schedule[i] + 1000, " ms (", watch.ms(), " ms in all)"));
    }
    if (ev->type == RDMA_CM_EVENT_ADDR_RESOLVED) {
      if (i > 0) {
        spdlog::info("rdma_cm: address {} resolved on attempt {} after {} ms", what, i + 1,
                     watch.ms());
      }
      return absl::OkStatus();
    }
    last = absl::StrCat(rdma_event_str(ev->type), " (status ", ev->status, ")");
    const bool retry = ev->type == RDMA_CM_EVENT_ADDR_ERROR &&
                       (ev->status == -ETIMEDOUT || ev->status == -ENODATA);
    if (!retry) break;
  }
  return absl::UnavailableError(absl::StrCat(
      "address ", what, " not resolved: ", schedule.size(), " attempt(s) over ", watch.ms(),
      " ms (timeouts ", schedule.empty() ? 0 : schedule.front(), " .. ",
      schedule.empty() ? 0 : schedule.back(), " ms, ", total_ms,
      " ms budget), last ", last, " (no RDMA path between the two addresses?)"));
}

absl::Status ResolveRoute(rdma_cm_id* id, rdma_event_channel* channel, const sockaddr_storage& src,
                          const sockaddr_storage& dst, int timeout_ms) {
  const std::string what = PathText(src, dst);
  GDR_RETURN_IF_ERROR(ResolveAddress(id, channel, src, dst, timeout_ms));
  if (rdma_resolve_route(id, timeout_ms) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rdma_resolve_route ", what));
  }
  auto ev = ExpectCmEvent(channel, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms + 1000);
  if (!ev.ok()) return absl::Status(ev.status().code(), absl::StrCat(what, ": ", ev.status().message()));
  return absl::OkStatus();
}

absl::Status SetAckTimeout(rdma_cm_id* id, uint8_t timeout) {
  if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout)) !=
      0) {
    return ErrnoToStatus(errno, "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)");
  }
  return absl::OkStatus();
}

std::string RejectHint(int status) {
  // The IB CM reject reasons (IBTA vol. 1, 12.6.7.2, rdma_cm's ev->status on
  // IB and RoCE): 8 invalid service ID, 28 consumer (the peer's rdma_reject).
  switch (status) {
    case 8:
      return " (nothing listens on that address and port: is the target open?)";
    case 28:
      return " (the target refused it: its QP slot is taken or the connect data is not its "
             "initiator's; see the target agent's log)";
    default:
      return absl::StrCat(" (reject reason ", status,
                          ": is the target open, and is this its initiator?)");
  }
}

absl::Status SetTos(rdma_cm_id* id, uint8_t tos) {
  if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rdma_set_option(RDMA_OPTION_ID_TOS, ", int{tos}, ")"));
  }
  return absl::OkStatus();
}

absl::Status Connect(rdma_cm_id* id, rdma_event_channel* channel, const void* private_data,
                     uint8_t private_data_len, int timeout_ms) {
  rdma_conn_param param{};
  param.private_data = private_data;
  param.private_data_len = private_data_len;
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  if (rdma_connect(id, &param) != 0) return ErrnoToStatus(errno, "rdma_connect");
  auto ev = ExpectCmEvent(channel, RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
  return ev.status();
}

absl::StatusOr<PathInfo> QueryPath(const FsRoot& fs, rdma_cm_id* id) {
  PathInfo p;
  p.device = DeviceName(id->verbs);
  p.port = id->port_num;
  p.local_address = FormatSockAddr(rdma_get_local_addr(id));
  p.remote_address = FormatSockAddr(rdma_get_peer_addr(id));
  if (id->qp == nullptr) return p;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(id->qp, &attr, IBV_QP_AV | IBV_QP_PATH_MTU, &init); rc != 0) {
    return VerbsError(rc, "ibv_query_qp", p.device);
  }
  p.path_mtu_bytes = attr.path_mtu >= IBV_MTU_256 && attr.path_mtu <= IBV_MTU_4096
                         ? 128u << attr.path_mtu
                         : 0;
  if (attr.ah_attr.is_global) {
    p.gid_index = attr.ah_attr.grh.sgid_index;
    ibv_gid gid{};
    if (ibv_query_gid(id->verbs, p.port, p.gid_index, &gid) == 0) {
      for (int i = 0; i < 16; i += 2) {
        if (i) p.gid += ':';
        p.gid += absl::StrFormat("%02x%02x", gid.raw[i], gid.raw[i + 1]);
      }
    }
    if (auto t = fs.ReadLine(absl::StrCat("/sys/class/infiniband/", p.device, "/ports/", p.port,
                                          "/gid_attrs/types/", p.gid_index));
        t.ok()) {
      p.gid_type = *t;
    }
  }
  return p;
}

}  // namespace gdrbench::agent::verbs
