// link_error_counters: the error counters of every RDMA port, read twice
// `interval` apart (live: 1 s; offline once, since a captured tree cannot
// change). In the agent the first read is its background sample of at least
// `interval` ago (counters::CounterHistory), so a sweep's preflight does not
// wait; a port without one (the agent just started) is read twice. Names from Documentation/ABI/stable/sysfs-class-infiniband
// (ports/<n>/counters/: the PortCounters of the InfiniBand PMA) and, where the
// driver has them, ports/<n>/hw_counters/ (mlx5's retransmission counters,
// drivers/infiniband/hw/mlx5/counters.c; rxe's link_downed).
//   non-zero: WARN (errors since the counters were last cleared);
//   growing between the two reads: FAIL on a GPU rail (a link erroring now),
//   WARN on a NIC that is not one.
#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/counters/counter_history.h"
#include "agent/counters/port_counters.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

struct Key {
  std::string nic;
  uint32_t port;
  std::string file;  // "counters/symbol_error"
  bool operator<(const Key& o) const {
    return std::tie(nic, port, file) < std::tie(o.nic, o.port, o.file);
  }
};

void Add(const counters::Sample& s, std::map<Key, uint64_t>* out) {
  for (const auto& [file, v] : s.values) out->emplace(Key{s.device, s.port, file}, v);
}

std::map<Key, uint64_t> ReadAll(Context& ctx, const std::vector<verbs::DeviceInfo>& devs) {
  std::map<Key, uint64_t> out;
  for (const auto& d : devs) {
    for (const auto& p : d.ports) {
      Add(counters::ReadPort(ctx.fs(), d.name, p.port_num, counters::LinkErrorCounters()), &out);
    }
  }
  return out;
}

// The two reads to compare and how far apart they were.
struct Reads {
  std::map<Key, uint64_t> first, second;
  absl::Duration shortest, longest;  // between the two reads, over the ports
  bool twice = false;                // false: offline, read once
  bool from_history = false;
};

// Live in the agent: every port's background sample of at least the interval
// ago against a read now; nullopt when a port has none yet.
std::optional<Reads> AgainstHistory(Context& ctx, const std::vector<verbs::DeviceInfo>& devs) {
  const counters::CounterHistory* h = ctx.counter_history();
  if (h == nullptr) return std::nullopt;
  Reads r;
  r.twice = r.from_history = true;
  r.shortest = absl::InfiniteDuration();
  r.longest = absl::ZeroDuration();
  for (const auto& d : devs) {
    for (const auto& p : d.ports) {
      std::optional<counters::Sample> old =
          h->Before(d.name, p.port_num, absl::ToChronoNanoseconds(ctx.counter_interval()));
      if (!old.has_value()) return std::nullopt;
      counters::Sample now = counters::ReadPort(ctx.fs(), d.name, p.port_num, counters::LinkErrorCounters());
      absl::Duration apart = absl::Nanoseconds(now.taken_ns - old->taken_ns);
      r.shortest = std::min(r.shortest, apart);
      r.longest = std::max(r.longest, apart);
      Add(*old, &r.first);
      Add(now, &r.second);
    }
  }
  return r;
}

Reads ReadTwice(Context& ctx, const std::vector<verbs::DeviceInfo>& devs) {
  Reads r;
  r.first = ReadAll(ctx, devs);
  r.second = r.first;
  r.twice = static_cast<bool>(ctx.counter_wait());
  r.shortest = r.longest = ctx.counter_interval();
  if (r.twice && !r.first.empty()) {
    ctx.counter_wait()();
    r.second = ReadAll(ctx, devs);
  }
  return r;
}

// "1s"; against the history "1.2s", or "1.1s-1.9s" when the ports'
// intervals differ, to 0.1 s.
std::string Apart(const Reads& r) {
  if (!r.from_history) return absl::FormatDuration(r.shortest);
  auto round = [](absl::Duration d) { return absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(100))); };
  std::string lo = round(r.shortest), hi = round(r.longest);
  return lo == hi ? lo : absl::StrCat(lo, "-", hi);
}

}  // namespace

CheckResult CheckLinkErrorCounters(Context& ctx) {
  const char* kId = "link_error_counters";
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok() || devs->empty()) return Result(kId, Status::kSkip, "no RDMA device (see rdma_devices)");
  std::optional<Reads> history = AgainstHistory(ctx, *devs);
  Reads reads = history.has_value() ? *std::move(history) : ReadTwice(ctx, *devs);
  const std::map<Key, uint64_t>& first = reads.first;
  const std::map<Key, uint64_t>& second = reads.second;
  if (first.empty() && second.empty()) {
    return Result(kId, Status::kSkip, "no port error counters in sysfs")
        .Saw(ctx.Where("/sys/class/infiniband/<dev>/ports/<n>/counters"), "absent");
  }
  const std::string apart = Apart(reads);
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
      r.Saw(src, absl::StrFormat("%d -> %d in %s", v0, v1, apart));
      growing.push_back(absl::StrFormat("%s +%d%s", what, v1 - v0, NotRailNote(ctx, k.nic)));
      worst = Worse(worst, StrictNic(ctx, k.nic) ? Status::kFail : Status::kWarn);
    } else {
      r.Saw(src, absl::StrCat(v1));
      nonzero.push_back(absl::StrCat(what, " ", v1));
      worst = Worse(worst, Status::kWarn);
    }
  }
  r.status = worst;
  std::string when = !reads.twice          ? std::string(" (read once: offline)")
                     : reads.from_history ? absl::StrCat(" (read now and in the agent's sample of ", apart, " before)")
                                          : absl::StrCat(" (read twice, ", apart, " apart)");
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
