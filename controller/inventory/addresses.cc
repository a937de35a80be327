// Nodes named by address rather than by an inventory file's entries:
// HOST:PORT parsing, dns: names (every address a name resolves to, each
// node named by its agent later), and the --agents / --hostlist lists.
#include <charconv>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/limits.h"
#include "common/status.h"
#include "controller/inventory/addresses.h"
#include "controller/inventory/hostlist.h"
#include "controller/inventory/inventory.h"

namespace gdrbench::controller::inventory {

std::string WithPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::Status SplitHostPort(absl::string_view address, std::string* host, int* port) {
  *port = -1;
  absl::string_view h = address;
  absl::string_view p;
  if (absl::StartsWith(address, "[")) {
    size_t close = address.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("address \"", address, "\": '[' without ']'"));
    }
    h = address.substr(1, close - 1);
    absl::string_view rest = address.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') {
        return absl::InvalidArgumentError(absl::StrCat("address \"", address, "\": junk after ']'"));
      }
      p = rest.substr(1);
    }
  } else {
    size_t colon = address.rfind(':');
    // A bare IPv6 address (several colons, no brackets) has no port.
    if (colon != absl::string_view::npos && address.find(':') == colon) {
      h = address.substr(0, colon);
      p = address.substr(colon + 1);
    }
  }
  if (h.empty()) return absl::InvalidArgumentError(absl::StrCat("address \"", address, "\": no host"));
  *host = std::string(h);
  if (address.find(':') != absl::string_view::npos && !absl::StartsWith(address, "[") && p.empty() &&
      address.back() == ':') {
    return absl::InvalidArgumentError(absl::StrCat("address \"", address, "\": empty port"));
  }
  if (!p.empty()) {
    int v = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || ptr != p.data() + p.size() || v < 1 || v > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("address \"", address, "\": port \"", p, "\" is not in 1..65535"));
    }
    *port = v;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Node>> NodesFromDns(absl::string_view spec, int default_port,
                                               const Resolver& resolver) {
  std::string name;
  int port = -1;
  if (absl::Status st = SplitHostPort(spec, &name, &port); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("dns:", spec, ": ", st.message()));
  }
  if (port < 0) port = default_port;
  auto addresses = resolver.Resolve(name);
  if (!addresses.ok()) {
    return absl::Status(addresses.status().code(),
                        absl::StrCat("dns:", spec, ": ", addresses.status().message()));
  }
  std::vector<Node> nodes;
  for (const std::string& a : *addresses) {
    Node n;
    n.name = a;
    n.address = WithPort(a, port);
    n.name_from_agent = true;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

namespace {

absl::StatusOr<Inventory> FromList(absl::string_view agents, int default_port, const std::string& flag,
                                   const Resolver* resolver);

}  // namespace

absl::StatusOr<Inventory> InventoryFromAgents(absl::string_view agents, int default_port,
                                              const Resolver& resolver) {
  return FromList(agents, default_port, "--agents", &resolver);
}

absl::StatusOr<Inventory> InventoryFromHostlist(absl::string_view expression, int default_port) {
  return FromList(expression, default_port, "--hostlist", nullptr);
}

namespace {

// Nodes from a list are one per HOST:PORT (several agents per kernel are a
// documented use): one address twice is an error; a host listed with several
// ports names its nodes HOST:PORT.
absl::Status KeyByAddress(const std::string& flag, Inventory* inv) {
  if (inv->nodes.size() > limits::kMaxNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", inv->nodes.size(), " nodes; a plan holds at most ", limits::kMaxNodes));
  }
  std::map<std::string, int> per_name;
  std::set<std::string> addresses;
  for (const Node& n : inv->nodes) {
    if (!addresses.insert(n.address).second) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": '", n.address, "' listed twice"));
    }
    ++per_name[n.name];
  }
  for (Node& n : inv->nodes) {
    if (per_name[n.name] > 1) n.name = n.address;
  }
  return absl::OkStatus();
}

absl::StatusOr<Inventory> FromList(absl::string_view agents, int default_port, const std::string& flag,
                                   const Resolver* resolver) {
  Inventory inv;
  inv.source = flag;
  std::set<std::string> names;
  if (agents.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": empty list"));
  for (const std::string& entry : SplitTopLevel(agents)) {
    if (resolver != nullptr && absl::StartsWith(entry, "dns:")) {
      auto found = NodesFromDns(absl::string_view(entry).substr(4), default_port, *resolver);
      if (!found.ok()) {
        return absl::Status(found.status().code(), absl::StrCat(flag, ": ", found.status().message()));
      }
      // The same address under two names is one agent.
      for (Node& n : *found) {
        if (names.insert(n.name).second) inv.nodes.push_back(std::move(n));
      }
      continue;
    }
    std::string host;
    int port = -1;
    // The port belongs to the whole entry; brackets in the host are a hostlist
    // unless the entry is a bracketed IPv6 address.
    absl::string_view e = entry;
    std::string hostpart = entry;
    if (size_t colon = e.rfind(':'); colon != absl::string_view::npos && e.find(':') == colon &&
                                     e.find(']', colon) == absl::string_view::npos) {
      GDR_RETURN_IF_ERROR(SplitHostPort(e, &host, &port));
      hostpart = host;
    } else if (absl::StartsWith(e, "[") && e.find(':') != absl::string_view::npos) {
      GDR_RETURN_IF_ERROR(SplitHostPort(e, &host, &port));
      if (port < 0) port = default_port;
      Node n;
      n.name = host;
      n.address = WithPort(host, port);
      inv.nodes.push_back(std::move(n));
      continue;
    }
    if (port < 0) port = default_port;
    auto hosts = ExpandHostlist(hostpart, limits::kMaxNodes);
    if (!hosts.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", hosts.status().message()));
    for (const auto& h : *hosts) {
      Node n;
      n.name = h;
      n.address = WithPort(h, port);
      inv.nodes.push_back(std::move(n));
    }
  }
  GDR_RETURN_IF_ERROR(KeyByAddress(flag, &inv));
  return inv;
}

}  // namespace

}  // namespace gdrbench::controller::inventory
