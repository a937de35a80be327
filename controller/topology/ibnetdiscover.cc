#include "controller/topology/ibnetdiscover.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/topology/cable_book.h"

namespace gdrbench::controller::topology {
namespace {

// `Switch  41 "S-guid"  # "desc" ...` / `Ca  1 "H-guid"  # "desc"`.
const std::regex kHeader(R"re(^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*#\s*"([^"]*)".*$)re");
// `[1]  "S-peer"[21](peerportguid)  # ...` or, on a Ca, `[1](portguid)  "S-peer"[1]  # ...`.
const std::regex kPort(R"re(^\[(\d+)\](\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\](\([0-9a-fA-F]+\))?\s*(#.*)?$)re");
// The link's width and speed in a port line's comment: "4xHDR".
const std::regex kLink(R"re(\b(\d+x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR))\b)re");
// The first quoted string of a port line's comment: the peer's description.
const std::regex kQuoted(R"re("([^"]*)")re");

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  absl::Status Line(absl::string_view raw, int n) {
    const std::string line(absl::StripAsciiWhitespace(raw));
    where_ = absl::StrCat(source_, ":", n);
    if (line.empty() || line[0] == '#') return absl::OkStatus();
    for (const char* key : {"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid="}) {
      if (absl::StartsWith(line, key)) return Key(line);
    }
    std::smatch m;
    if (std::regex_match(line, m, kHeader)) return Header(m);
    if (std::regex_match(line, m, kPort)) return Port(m);
    return Error(absl::StrCat("neither a record header, a port line nor a key=value line: '",
                              line.substr(0, 80), "'"));
  }

  absl::StatusOr<Fabric> Finish() {
    if (fabric_.devices.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source_, ": no Switch or Ca record: not ibnetdiscover output"));
    }
    for (auto& [id, d] : fabric_.devices) {
      if (!d.recorded()) fabric_.unrecorded_peers.push_back(id);
    }
    AssignTiers(fabric_);
    return std::move(fabric_);
  }

 private:
  absl::Status Error(const std::string& why) const { return absl::InvalidArgumentError(absl::StrCat(where_, ": ", why)); }

  absl::Status Key(const std::string& line) {
    if (absl::StartsWith(line, "switchguid=") || absl::StartsWith(line, "caguid=") ||
        absl::StartsWith(line, "rtguid=")) {
      std::string v = line.substr(line.find('=') + 1);
      guid_ = v.substr(0, v.find('('));
      if (!absl::StartsWith(guid_, "0x") || NormalizeGuid(guid_).empty()) {
        return Error(absl::StrCat("a GUID is written 0x..., got '", v, "'"));
      }
      guid_ = NormalizeGuid(guid_);
    }
    return absl::OkStatus();
  }

  Device& Touch(const std::string& id) {
    Device& d = fabric_.devices[id];
    if (d.id.empty()) {
      d.id = id;
      d.kind = absl::StartsWith(id, "S-") ? DeviceKind::kSwitch : DeviceKind::kHost;
    }
    return d;
  }

  absl::Status Header(const std::smatch& m) {
    const std::string id = m[3];
    Device& d = Touch(id);
    if (d.recorded()) return Error(absl::StrCat(id, " has a second record (the first at ", d.where, ")"));
    d.kind = m[1] == "Switch" ? DeviceKind::kSwitch : DeviceKind::kHost;
    d.description = m[4];
    d.guid = std::exchange(guid_, "");
    d.where = where_;
    current_ = id;
    return absl::OkStatus();
  }

  absl::Status Port(const std::smatch& m) {
    if (current_.empty()) return Error("port line outside a Switch or Ca record");
    int port = 0, peer_port = 0;
    if (!absl::SimpleAtoi(m[1].str(), &port) || !absl::SimpleAtoi(m[4].str(), &peer_port)) {
      return Error("port numbers out of range");
    }
    const PortRef self{current_, port}, peer{m[3], peer_port};
    const std::string comment = m[6];
    std::smatch q;
    Device& p = Touch(peer.device);
    // A switch's port line describes its peer first; a Ca's names its own lid first.
    if (p.description.empty() && std::regex_search(comment, q, kQuoted)) p.description = q[1];
    std::smatch l;
    const std::string link = std::regex_search(comment, l, kLink) ? l[1].str() : "";
    if (m[2].matched && fabric_.devices.at(current_).kind == DeviceKind::kHost) {
      fabric_.devices.at(current_).port_guid = NormalizeGuid(m[2].str().substr(1, m[2].length() - 2));
    }
    return book_.Add(self, peer, link, LinkGbps(link), where_, fabric_.cables);
  }

  std::string source_, where_, guid_, current_;
  CableBook book_;
  Fabric fabric_;
};

}  // namespace

absl::StatusOr<Fabric> ParseIbnetdiscover(const std::string& text, const std::string& source) {
  Parser parser(source);
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (auto st = parser.Line(line, ++n); !st.ok()) return st;
  }
  return parser.Finish();
}

absl::StatusOr<Fabric> LoadIbnetdiscover(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the topology file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseIbnetdiscover(text.str(), path);
}

}  // namespace gdrbench::controller::topology
