#include "controller/topology/iblinkinfo.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/topology/cable_book.h"

namespace gdrbench::controller::topology {
namespace {

// GUID "desc" LID PORT[ext] ==(LINK)[ (HOQ:n VL_Stall:n)]==> REST
const std::regex kLine(
    R"re(^(0x[0-9a-fA-F]+)\s+"([^"]*)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)(\s*\(HOQ:\d+ VL_Stall:\d+\))?==>\s*(.*)$)re");
// "4X      25.78125 Gbps Active/  LinkUp" (the lane speed may carry " (FDR10)").
const std::regex kUp(R"re(^\s*(\d+)X\s+([0-9.]+ Gbps(?: \(FDR10\))?)\s+(\w+)/\s*(\w+)\s*$)re");
// "               Down/ Polling"
const std::regex kDown(R"re(^\s*(\w+)/\s*(\w+)\s*$)re");
// PEERGUID PEERLID PEERPORT[ext] "peer desc" (hints)
const std::regex kPeer(R"re(^(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+)\[[^\]]*\]\s+"([^"]*)"\s*(\(.*\))?\s*$)re");

// libibmad's names for LinkSpeedActive / LinkSpeedExtActive (and FDR10),
// with the generation each one is.
const std::map<std::string, std::string>& LaneNames() {
  static const auto* names = new std::map<std::string, std::string>{
      {"2.5 Gbps", "SDR"},       {"5.0 Gbps", "DDR"},      {"10.0 Gbps", "QDR"},
      {"10.0 Gbps (FDR10)", "FDR10"}, {"14.0625 Gbps", "FDR"}, {"25.78125 Gbps", "EDR"},
      {"53.125 Gbps", "HDR"},    {"106.25 Gbps", "NDR"},   {"212.5 Gbps", "XDR"}};
  return *names;
}

struct Link {
  std::string near_guid, near_desc, far_guid, far_desc;
  int near_port = 0, far_port = 0;
  std::string link;  // "4xEDR"
  std::string where;
};

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  absl::Status Line(absl::string_view raw, int n) {
    const std::string line(absl::StripAsciiWhitespace(raw));
    const std::string where = absl::StrCat(source_, ":", n);
    if (line.empty() || line[0] == '#') return absl::OkStatus();
    auto error = [&](const std::string& why) { return absl::InvalidArgumentError(absl::StrCat(where, ": ", why)); };
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) {
      return error(absl::StrCat("not an iblinkinfo --line port line: '", line.substr(0, 80), "'"));
    }
    Link l;
    l.where = where;
    l.near_guid = NormalizeGuid(m[1]);
    l.near_desc = std::string(absl::StripAsciiWhitespace(m[2].str()));
    if (l.near_guid.empty() || !absl::SimpleAtoi(m[4].str(), &l.near_port)) {
      return error(absl::StrCat("bad GUID or port number in '", line.substr(0, 80), "'"));
    }
    ports_[l.near_guid].insert(l.near_port);
    Describe(l.near_guid, l.near_desc, where);
    const std::string link = m[5], rest = m[7];
    std::smatch s;
    if (std::regex_match(link, s, kDown)) return absl::OkStatus();  // a down port: no cable
    if (!std::regex_match(link, s, kUp)) return error(absl::StrCat("cannot read the link '(", link, ")'"));
    const auto lane = LaneNames().find(s[2]);
    if (lane == LaneNames().end()) {
      return error(absl::StrCat("lane speed '", s[2].str(), "' is not one iblinkinfo prints"));
    }
    l.link = absl::StrCat(s[1].str(), "x", lane->second);
    if (s[3] != "Active" && s[3] != "Armed" && s[3] != "Initialize") {
      return error(absl::StrCat("port state '", s[3].str(), "' of a port with a width and speed"));
    }
    if (absl::StartsWith(rest, "\"Port not available\"")) return absl::OkStatus();
    std::smatch p;
    if (!std::regex_match(rest, p, kPeer)) return error(absl::StrCat("cannot read the peer '", rest.substr(0, 80), "'"));
    l.far_guid = NormalizeGuid(p[1]);
    l.far_desc = p[4];
    if (l.far_guid.empty() || !absl::SimpleAtoi(p[3].str(), &l.far_port)) {
      return error(absl::StrCat("bad peer GUID or port number in '", rest.substr(0, 80), "'"));
    }
    ports_[l.far_guid].insert(l.far_port);
    Describe(l.far_guid, l.far_desc, where);
    links_.push_back(std::move(l));
    return absl::OkStatus();
  }

  absl::StatusOr<Fabric> Finish() {
    if (ports_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source_, ": no port line: not iblinkinfo --line output"));
    }
    for (const Link& l : links_) {
      if (auto st = Place(l.near_guid, l.far_guid, l.where); !st.ok()) return st;
      if (auto st = Place(l.far_guid, l.near_guid, l.where); !st.ok()) return st;
    }
    Fabric fabric;
    for (const auto& [guid, ports] : ports_) {
      if (!switches_.count(guid) && !hosts_.count(guid)) continue;  // only a down port of its own
      Device d;
      d.kind = switches_.count(guid) ? DeviceKind::kSwitch : DeviceKind::kHost;
      d.id = Id(guid);
      d.guid = guid;
      if (d.kind == DeviceKind::kHost) d.port_guid = guid;
      d.description = descriptions_[guid];
      d.where = first_where_[guid];
      fabric.devices[d.id] = d;
    }
    CableBook book;
    for (const Link& l : links_) {
      const PortRef self{Id(l.near_guid), l.near_port}, peer{Id(l.far_guid), l.far_port};
      if (auto st = book.Add(self, peer, l.link, LinkGbps(l.link), l.where, fabric.cables); !st.ok()) return st;
    }
    AssignTiers(fabric);
    return fabric;
  }

 private:
  void Describe(const std::string& guid, const std::string& desc, const std::string& where) {
    if (descriptions_[guid].empty()) descriptions_[guid] = desc;
    if (first_where_[guid].empty()) first_where_[guid] = where;
  }

  // A GUID with two or more ports is a switch; one with a single port is a
  // host when its peer is a switch.
  absl::Status Place(const std::string& guid, const std::string& peer, const std::string& where) {
    if (ports_[guid].size() >= 2) {
      switches_.insert(guid);
      return absl::OkStatus();
    }
    if (ports_[peer].size() >= 2) {
      hosts_.insert(guid);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": cannot tell whether ", guid, " (\"", descriptions_[guid], "\") or its peer ", peer, " (\"",
        descriptions_[peer], "\") is the switch: each shows one port (a full iblinkinfo --line lists every port "
        "of a switch)"));
  }

  std::string Id(const std::string& guid) const {
    return absl::StrCat(switches_.count(guid) ? "S-" : "H-", guid.substr(2));
  }

  std::string source_;
  std::vector<Link> links_;
  std::map<std::string, std::set<int>> ports_;  // GUID -> the port numbers lines show it with
  std::map<std::string, std::string> descriptions_, first_where_;
  std::set<std::string> switches_, hosts_;
};

}  // namespace

absl::StatusOr<Fabric> ParseIblinkinfo(const std::string& text, const std::string& source) {
  Reader reader(source);
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (auto st = reader.Line(line, ++n); !st.ok()) return st;
  }
  return reader.Finish();
}

absl::StatusOr<Fabric> LoadIblinkinfo(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the topology file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseIblinkinfo(text.str(), path);
}

}  // namespace gdrbench::controller::topology
