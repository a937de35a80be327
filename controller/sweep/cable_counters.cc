#include "controller/sweep/cable_counters.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::sweep {
namespace {

using Index = std::map<std::pair<std::string, std::string>, const v1::SwitchPortCounters*>;

Index IndexOf(const v1::SwitchCounters& c) {
  Index ix;
  for (const v1::SwitchPortCounters& p : c.ports()) ix[{p.device(), p.port()}] = &p;
  return ix;
}

// One end's counters before and after; null when the counters lack it.
struct EndCounters {
  const v1::SwitchPortCounters* before = nullptr;
  const v1::SwitchPortCounters* after = nullptr;
  std::string name;  // "leaf1 swp3": how the counters named it
  bool went_back = false;
};

EndCounters Find(const run::CableEnd& end, const Index& before, const Index& after) {
  EndCounters e;
  for (const std::string& device : end.devices) {
    auto b = before.find({device, end.port});
    auto a = after.find({device, end.port});
    if (b == before.end() || a == after.end()) continue;
    e.before = b->second;
    e.after = a->second;
    e.name = absl::StrCat(device, " ", end.port);
    const auto& x = *e.before;
    const auto& y = *e.after;
    e.went_back = y.tx_bytes() < x.tx_bytes() || y.rx_bytes() < x.rx_bytes() ||
                  y.rx_errors() < x.rx_errors() || y.tx_errors() < x.tx_errors() ||
                  y.rx_dropped() < x.rx_dropped() || y.tx_dropped() < x.tx_dropped();
    break;
  }
  return e;
}

bool Usable(const EndCounters& e) { return e.before != nullptr && !e.went_back; }
uint64_t Tx(const EndCounters& e) { return e.after->tx_bytes() - e.before->tx_bytes(); }
uint64_t Rx(const EndCounters& e) { return e.after->rx_bytes() - e.before->rx_bytes(); }
uint64_t Errors(const EndCounters& e) {
  return (e.after->rx_errors() - e.before->rx_errors()) + (e.after->tx_errors() - e.before->tx_errors());
}
uint64_t Drops(const EndCounters& e) {
  return (e.after->rx_dropped() - e.before->rx_dropped()) + (e.after->tx_dropped() - e.before->tx_dropped());
}

std::string Bytes(uint64_t b) {
  if (b >= 1'000'000) return absl::StrFormat("%.1f MB", b / 1e6);
  if (b >= 10'000) return absl::StrFormat("%.1f kB", b / 1e3);
  return absl::StrCat(b, " B");
}

void Add(v1::FabricCoverage* c, const run::FabricCable& cable, const char* kind, std::string detail) {
  v1::CableCounterFinding& f = *c->add_counter_findings();
  f.set_cable(cable.name);
  f.set_tier(static_cast<uint32_t>(cable.tier < 0 ? 0 : cable.tier));
  f.set_kind(kind);
  f.set_detail(std::move(detail));
}

// Whether every loaded direction of the cable moved (adding a finding for
// each that did not).
bool JudgeTraffic(const run::FabricCable& cable, const CableLoad& load, const EndCounters& lo,
                  const EndCounters& up, v1::FabricCoverage* c) {
  bool confirmed = true;
  for (int dir = 0; dir < 2; ++dir) {
    if (load.flows[dir] == 0) continue;
    // up: the lower end sends, the upper end receives; down: the reverse.
    uint64_t moved = 0;
    std::string seen;
    if (Usable(lo)) {
      const uint64_t b = dir == 0 ? Tx(lo) : Rx(lo);
      moved = std::max(moved, b);
      absl::StrAppend(&seen, lo.name, dir == 0 ? " tx +" : " rx +", Bytes(b));
    }
    if (Usable(up)) {
      const uint64_t b = dir == 0 ? Rx(up) : Tx(up);
      moved = std::max(moved, b);
      absl::StrAppend(&seen, seen.empty() ? "" : ", ", up.name, dir == 0 ? " rx +" : " tx +", Bytes(b));
    }
    if (moved * 2 >= load.bytes[dir]) continue;
    confirmed = false;
    Add(c, cable, "no traffic",
        absl::StrCat("expected >= ", Bytes(load.bytes[dir] / 2), dir == 0 ? " up" : " down", " (",
                     load.flows[dir], load.flows[dir] == 1 ? " completed flow, " : " completed flows, ",
                     Bytes(load.bytes[dir]), "); the counters moved ", seen));
  }
  return confirmed;
}

}  // namespace

absl::StatusOr<v1::SwitchCounters> ParseSwitchCounters(const std::string& json, const std::string& source) {
  v1::SwitchCounters c;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  if (auto st = google::protobuf::util::JsonStringToMessage(json, &c, opts); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": not switch counters JSON ({\"ports\": [{\"device\", \"port\", \"tx_bytes\", ...}]}): ",
        std::string(st.message())));
  }
  std::map<std::pair<std::string, std::string>, int> seen;
  for (int i = 0; i < c.ports_size(); ++i) {
    const v1::SwitchPortCounters& p = c.ports(i);
    if (p.device().empty() || p.port().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": ports[", i, "]: no ", p.device().empty() ? "device" : "port"));
    }
    if (auto [it, fresh] = seen.emplace(std::pair{p.device(), p.port()}, i); !fresh) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ports[", i, "]: ", p.device(), " ", p.port(),
                                                     " again (first at ports[", it->second, "])"));
    }
  }
  return c;
}

void JudgeCableCounters(const run::FabricPaths& paths, const std::vector<CableLoad>& loads,
                        const v1::SwitchCounters& before, const v1::SwitchCounters& after,
                        v1::FabricCoverage* c) {
  const Index b = IndexOf(before), a = IndexOf(after);
  for (size_t i = 0; i < paths.cables.size() && i < loads.size(); ++i) {
    const run::FabricCable& cable = paths.cables[i];
    const CableLoad& load = loads[i];
    const EndCounters lo = Find(cable.lower, b, a), up = Find(cable.upper, b, a);
    const bool loaded = load.flows[0] + load.flows[1] > 0;
    for (const EndCounters* e : {&lo, &up}) {
      if (e->went_back)
        Add(c, cable, "counters went back", absl::StrCat(e->name, ": lower after the run than before"));
    }
    if (!Usable(lo) && !Usable(up)) {
      if (loaded && !lo.went_back && !up.went_back) {
        Add(c, cable, "not in the counters",
            absl::StrCat("completed flows crossed it; the counters list neither ",
                         cable.lower.devices.front(), " ", cable.lower.port, " nor ",
                         cable.upper.devices.front(), " ", cable.upper.port));
      }
      continue;
    }
    uint64_t errors = 0, drops = 0;
    for (const EndCounters* e : {&lo, &up}) {
      if (!Usable(*e)) continue;
      errors += Errors(*e);
      drops += Drops(*e);
    }
    if (errors > 0) Add(c, cable, "errors", absl::StrCat(errors, " rx/tx errors during the run"));
    if (drops > 0) Add(c, cable, "drops", absl::StrCat(drops, " packets dropped during the run"));
    if (loaded && JudgeTraffic(cable, load, lo, up, c) && cable.tier >= 0 && cable.tier < c->tiers_size()) {
      v1::CableTierCoverage& t = *c->mutable_tiers(cable.tier);
      t.set_counters_confirmed(t.counters_confirmed() + 1);
    }
  }
}

}  // namespace gdrbench::controller::sweep
