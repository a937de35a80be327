#include "agent/counters/port_counters.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gdrbench::agent::counters {
namespace {

constexpr uint64_t Max(int bits) { return (uint64_t{1} << bits) - 1; }

// PMA widths from drivers/infiniband/core/sysfs.c (PORT_PMA_ATTR(name,
// counter, width, offset)); the IBA PortCounters stop at all ones. The packet
// and data counters come from PortCountersExtended (64 bits) where the port
// has it and from PortCounters (32 bits) where not; a value of exactly
// 2^32 - 1 is taken as saturated (a 64-bit counter standing there at a
// sample is a one-in-four-billion coincidence), else a stuck 32-bit counter
// would read as no traffic.
// hw_counters are the drivers' 64-bit software or firmware counters.
constexpr CounterDef kDefs[] = {
    {"counters/symbol_error", Kind::kLink, Max(16)},
    {"counters/link_error_recovery", Kind::kLink, Max(8)},
    {"counters/link_downed", Kind::kLink, Max(8)},
    {"counters/port_rcv_errors", Kind::kLink, Max(16)},
    {"counters/port_rcv_remote_physical_errors", Kind::kLink, Max(16)},
    {"counters/local_link_integrity_errors", Kind::kLink, Max(4)},
    {"counters/excessive_buffer_overrun_errors", Kind::kLink, Max(4)},
    {"counters/port_xmit_discards", Kind::kCongestion, Max(16)},
    {"counters/port_xmit_wait", Kind::kCongestion, Max(32)},
    {"counters/port_xmit_packets", Kind::kPackets, Max(32)},
    {"counters/port_rcv_packets", Kind::kPackets, Max(32)},
    // Data on the wire, in 4-byte words (IBA PortXmitData / PortRcvData).
    {"counters/port_xmit_data", Kind::kData, Max(32)},
    {"counters/port_rcv_data", Kind::kData, Max(32)},
    // rxe (rxe_hw_counters.c) and mlx5 (counters.c) share link_downed and
    // duplicate_request.
    {"hw_counters/link_downed", Kind::kLink},
    {"hw_counters/duplicate_request", Kind::kRetransmit},
    // rxe: the responder saw a PSN ahead of the expected one; the requester
    // got a sequence-error NAK; the completer retried (ACK timeout);
    // retries ran out; a packet could not be sent.
    {"hw_counters/out_of_seq_request", Kind::kRetransmit},
    {"hw_counters/rcvd_seq_err", Kind::kRetransmit},
    {"hw_counters/completer_retry_err", Kind::kRetransmit},
    {"hw_counters/retry_exceeded_err", Kind::kRetransmit},
    {"hw_counters/send_err", Kind::kRetransmit},
    {"hw_counters/sent_pkts", Kind::kPackets},
    {"hw_counters/rcvd_pkts", Kind::kPackets},
    // mlx5 (out_of_seq_q_cnts, retrans_q_cnts).
    {"hw_counters/out_of_sequence", Kind::kRetransmit},
    {"hw_counters/packet_seq_err", Kind::kRetransmit},
    {"hw_counters/implied_nak_seq_err", Kind::kRetransmit},
    {"hw_counters/local_ack_timeout_err", Kind::kRetransmit},
    // mlx5 (drivers/infiniband/hw/mlx5/counters.c): RNR NAK retries ran out
    // (retrans_q_cnts); adaptive retransmissions, RoCE (roce_accl_cnts).
    {"hw_counters/rnr_nak_retry_err", Kind::kRetransmit},
    {"hw_counters/roce_adp_retrans", Kind::kRetransmit},
    // mlx5 extended_err_cnts (firmware with enhanced error q counters): a
    // requester's completions in error; a responder's refused remote
    // accesses (a bad rkey or range: another QP's, or this test's).
    {"hw_counters/req_cqe_error", Kind::kTransportError},
    {"hw_counters/resp_remote_access_errors", Kind::kTransportError},
    // mlx5 RoCE congestion control (cong_cnts): ECN-marked packets received,
    // CNPs sent by the notification point, CNPs handled / ignored by the
    // reaction point.
    {"hw_counters/np_ecn_marked_roce_packets", Kind::kCongestion},
    {"hw_counters/np_cnp_sent", Kind::kCongestion},
    {"hw_counters/rp_cnp_handled", Kind::kCongestion},
    {"hw_counters/rp_cnp_ignored", Kind::kCongestion},
};

// The names link_error_counters judges; their definitions are kDefs'.
constexpr const char* kLinkErrorNames[] = {
    "counters/symbol_error",
    "counters/link_downed",
    "counters/link_error_recovery",
    "counters/port_rcv_errors",
    "counters/excessive_buffer_overrun_errors",
    "hw_counters/link_downed",
    "hw_counters/packet_seq_err",
    "hw_counters/implied_nak_seq_err",
    "hw_counters/local_ack_timeout_err",
    "hw_counters/out_of_sequence",
};

}  // namespace

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::span<const CounterDef> TestCounters() { return kDefs; }
std::span<const CounterDef> LinkErrorCounters() {
  static const std::vector<CounterDef> defs = [] {
    std::vector<CounterDef> out;
    for (const char* name : kLinkErrorNames) out.push_back(*FindCounter(name));
    return out;
  }();
  return defs;
}

const CounterDef* FindCounter(const std::string& file) {
  for (const CounterDef& d : kDefs) {
    if (file == d.file) return &d;
  }
  return nullptr;
}

std::string PortDir(const std::string& device, uint32_t port) {
  return absl::StrCat("/sys/class/infiniband/", device, "/ports/", port, "/");
}

Sample ReadPort(const FsRoot& fs, const std::string& device, uint32_t port,
                std::span<const CounterDef> defs) {
  Sample s;
  s.device = device;
  s.port = port;
  const std::string base = PortDir(device, port);
  for (const CounterDef& d : defs) {
    uint64_t v = 0;
    // A file that is absent or does not parse is left out: Diff says so if
    // the other sample has it.
    if (auto line = fs.ReadLine(base + d.file); line.ok() && absl::SimpleAtoi(*line, &v)) {
      s.values[d.file] = v;
    }
  }
  s.taken_ns = NowNs();
  return s;
}

PortFiles::PortFiles(const FsRoot& fs, std::string device, uint32_t port,
                     std::span<const CounterDef> defs, std::optional<bool> keep_open)
    : fs_(fs), device_(std::move(device)), port_(port), defs_(defs),
      keep_open_(keep_open.value_or(fs.is_live())) {}

PortFiles::~PortFiles() { CloseLocked(); }

void PortFiles::OpenLocked() {
  const std::string base = PortDir(device_, port_);
  for (const CounterDef& d : defs_) {
    std::string path = base + d.file;
    if (!fs_.is_live()) {
      // A captured tree: its links resolved inside the root, never on this host.
      absl::StatusOr<std::string> real = fs_.RealPath(path);
      if (!real.ok()) continue;
      path = fs_.root() + *real;
    }
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // sysfs attributes are regular files
      close(fd);
      continue;
    }
    fds_.emplace_back(d.file, fd);
  }
  opened_ = true;
}

void PortFiles::CloseLocked() {
  for (auto& [file, fd] : fds_) close(fd);
  fds_.clear();
  opened_ = false;
}

Sample PortFiles::Read() {
  if (!keep_open_) return ReadPort(fs_, device_, port_, defs_);
  Sample s;
  s.device = device_;
  s.port = port_;
  std::lock_guard lock(mu_);
  if (!opened_) OpenLocked();
  char buf[32];
  bool failed = false;
  for (const auto& [file, fd] : fds_) {
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    uint64_t v = 0;
    if (n < 0) {
      failed = true;
      break;
    }
    // SimpleAtoi skips the newline around the value, as ReadLine does.
    if (absl::SimpleAtoi(absl::string_view(buf, static_cast<size_t>(n)), &v)) s.values[file] = v;
  }
  if (failed) {
    // The device is gone or was re-created: this sample by name, the
    // descriptors opened again next time.
    CloseLocked();
    return ReadPort(fs_, device_, port_, defs_);
  }
  s.taken_ns = NowNs();
  return s;
}

Delta Diff(const Sample& before, const Sample& after) {
  Delta d;
  d.device = after.device;
  d.port = after.port;
  d.interval_ns = after.taken_ns - before.taken_ns;
  if (before.values.empty() && after.values.empty()) {
    d.absent = absl::StrCat("no error counters in sysfs for ", after.device, " port ", after.port,
                            " (", PortDir(after.device, after.port), "counters/ and hw_counters/)");
    return d;
  }
  uint64_t pma_packets = 0, hw_packets = 0;
  auto kind_of = [](const std::string& file) {
    const CounterDef* def = FindCounter(file);
    return def != nullptr ? def->kind : Kind::kLink;
  };
  // Both maps are sorted by file: one merge pass.
  auto b = before.values.begin(), a = after.values.begin();
  while (b != before.values.end() || a != after.values.end()) {
    Change c;
    if (a == after.values.end() || (b != before.values.end() && b->first < a->first)) {
      c.file = b->first;
      c.kind = kind_of(c.file);
      c.before = b->second;
      c.note = absl::StrCat("read ", b->second, " before the test, absent after it");
      d.changes.push_back(std::move(c));
      ++b;
      continue;
    }
    if (b == before.values.end() || a->first < b->first) {
      c.file = a->first;
      c.kind = kind_of(c.file);
      c.after = a->second;
      c.note = absl::StrCat("absent before the test, ", a->second, " after it");
      d.changes.push_back(std::move(c));
      ++a;
      continue;
    }
    ++d.compared;
    const CounterDef* def = FindCounter(a->first);
    c.file = a->first;
    c.kind = def != nullptr ? def->kind : Kind::kLink;
    c.before = b->second;
    c.after = a->second;
    if (c.after < c.before) {
      c.note = absl::StrCat("went back from ", c.before, " to ", c.after,
                            " (cleared or wrapped during the test): its growth is unknown");
    } else if (def != nullptr && def->max != 0 && c.after == def->max) {
      c.note = absl::StrCat("at its maximum ", def->max,
                            " (saturated): its growth is unknown; clear the port's counters "
                            "(perfquery -x -R) to see it again");
    } else {
      c.delta = c.after - c.before;
      if (c.kind == Kind::kPackets) {
        (c.file.starts_with("hw_counters/") ? hw_packets : pma_packets) += c.delta;
      }
    }
    if (c.delta != 0 || !c.note.empty()) d.changes.push_back(std::move(c));
    ++b;
    ++a;
  }
  // A driver with both (mlx5: PMA packets; rxe: hw sent/rcvd) counts the same
  // packets twice over: take one.
  d.packets = std::max(pma_packets, hw_packets);
  return d;
}

}  // namespace gdrbench::agent::counters
