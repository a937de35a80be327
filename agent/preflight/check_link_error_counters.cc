// link_error_counters: the error counters of every RDMA port, read twice
// `interval` apart (live: 1 s; offline once, since a captured tree cannot
// change). Names from Documentation/ABI/stable/sysfs-class-infiniband
// (ports/<n>/counters/: the PortCounters of the InfiniBand PMA) and, where the
// driver has them, ports/<n>/hw_counters/ (mlx5's retransmission counters,
// drivers/infiniband/hw/mlx5/counters.c; rxe's link_downed).
//   non-zero: WARN (errors since the counters were last cleared);
//   growing between the two reads: FAIL on a GPU rail (a link erroring now),
//   WARN on a NIC that is not one.
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/counters/port_counters.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

// The counters this check judges (a subset of what is sampled around a
// test: packet and congestion counters say nothing about a port at rest).
constexpr counters::CounterDef kChecked[] = {
    {"counters/symbol_error", counters::Kind::kLink},
    {"counters/link_downed", counters::Kind::kLink},
    {"counters/link_error_recovery", counters::Kind::kLink},
    {"counters/port_rcv_errors", counters::Kind::kLink},
    {"counters/excessive_buffer_overrun_errors", counters::Kind::kLink},
    {"hw_counters/link_downed", counters::Kind::kLink},
    {"hw_counters/packet_seq_err", counters::Kind::kRetransmit},
    {"hw_counters/implied_nak_seq_err", counters::Kind::kRetransmit},
    {"hw_counters/local_ack_timeout_err", counters::Kind::kRetransmit},
    {"hw_counters/out_of_sequence", counters::Kind::kRetransmit},
};

struct Key {
  std::string nic;
  uint32_t port;
  std::string file;  // "counters/symbol_error"
  bool operator<(const Key& o) const {
    return std::tie(nic, port, file) < std::tie(o.nic, o.port, o.file);
  }
};

std::map<Key, uint64_t> ReadAll(Context& ctx, const std::vector<verbs::DeviceInfo>& devs) {
  std::map<Key, uint64_t> out;
  for (const auto& d : devs) {
    for (const auto& p : d.ports) {
      counters::Sample s = counters::ReadPort(ctx.fs(), d.name, p.port_num, kChecked);
      for (const auto& [file, v] : s.values) out[Key{d.name, p.port_num, file}] = v;
    }
  }
  return out;
}

}  // namespace

CheckResult CheckLinkErrorCounters(Context& ctx) {
  const char* kId = "link_error_counters";
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) return Result(kId, Status::kSkip, "no RDMA device (see rdma_devices)");
  std::map<Key, uint64_t> first = ReadAll(ctx, *devs);
  if (first.empty()) {
    return Result(kId, Status::kSkip, "no port error counters in sysfs")
        .Saw(ctx.Where("/sys/class/infiniband/<dev>/ports/<n>/counters"), "absent");
  }
  std::map<Key, uint64_t> second = first;
  bool twice = static_cast<bool>(ctx.counter_wait());
  if (twice) {
    ctx.counter_wait()();
    second = ReadAll(ctx, *devs);
  }
  CheckResult r;
  r.id = kId;
  Status worst = Status::kPass;
  std::vector<std::string> growing, nonzero;
  for (const auto& [k, v0] : first) {
    uint64_t v1 = second.count(k) ? second.at(k) : v0;
    if (v0 == 0 && v1 == 0) continue;
    std::string src = ctx.Where(absl::StrCat("/sys/class/infiniband/", k.nic, "/ports/", k.port, "/", k.file));
    std::string what = absl::StrCat(k.nic, " port ", k.port, " ", k.file.substr(k.file.find('/') + 1));
    if (v1 > v0) {
      r.Saw(src, absl::StrFormat("%d -> %d in %s", v0, v1, absl::FormatDuration(ctx.counter_interval())));
      growing.push_back(absl::StrFormat("%s +%d%s", what, v1 - v0, NotRailNote(ctx, k.nic)));
      worst = Worse(worst, StrictNic(ctx, k.nic) ? Status::kFail : Status::kWarn);
    } else {
      r.Saw(src, absl::StrCat(v1));
      nonzero.push_back(absl::StrCat(what, " ", v1));
      worst = Worse(worst, Status::kWarn);
    }
  }
  r.status = worst;
  std::string when = twice ? absl::StrCat(" (read twice, ", absl::FormatDuration(ctx.counter_interval()), " apart)")
                           : " (read once: offline)";
  if (worst == Status::kPass) {
    r.summary = absl::StrCat("all ", first.size(), " error counters are zero", when);
    r.Saw(ctx.Where("/sys/class/infiniband"), absl::StrCat(first.size(), " counters, all 0"));
    return r;
  }
  std::vector<std::string> parts;
  if (!growing.empty()) parts.push_back(absl::StrCat("errors counting up now: ", absl::StrJoin(growing, ", ")));
  if (!nonzero.empty()) parts.push_back(absl::StrCat("past errors: ", absl::StrJoin(nonzero, ", ")));
  r.summary = absl::StrCat(absl::StrJoin(parts, "; "), when);
  r.remediation =
      growing.empty()
          ? "errors from the past (since the counters were last cleared): clear them (perfquery -x -R "
            "<lid> <port>, or reload the driver) and run again; if they return, inspect the cable"
          : "a link erroring now: reseat or replace the cable/transceiver and clean the connectors, check "
            "the switch port (mlxlink -d <dev> -m for BER and eye, ethtool -S <netdev> for RoCE), then "
            "clear the counters (perfquery -x -R) and run again";
  return r;
}

}  // namespace gdrbench::agent::preflight
