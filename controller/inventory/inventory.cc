#include "controller/inventory/inventory.h"

#include <charconv>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "common/sweep_limits.h"
#include "common/bounded_read.h"
#include "common/limits.h"
#include "common/printable.h"
#include "controller/inventory/hostlist.h"
#include "controller/inventory/yaml_fields.h"
#include "yaml-cpp/yaml.h"

namespace gdrbench::controller::inventory {
namespace {

absl::StatusOr<std::vector<Rail>> GetRails(const Ctx& ctx, const YAML::Node& n,
                                           absl::string_view field) {
  if (!n.IsSequence()) return ctx.Error(n, field, absl::StrCat("expected a list, got ", Shown(n)));
  std::vector<Rail> rails;
  std::set<std::string> nics;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node r = n[i];
    std::string f = absl::StrCat(field, "[", i, "]");
    RETURN_IF_ERROR(CheckKeys(ctx, r, f, {"nic", "gpu"}));
    Rail rail;
    if (!r["nic"]) return ctx.Error(r, absl::StrCat(f, ".nic"), "missing");
    ASSIGN_OR_RETURN(rail.nic, GetString(ctx, r["nic"], absl::StrCat(f, ".nic")));
    if (!nics.insert(rail.nic).second) {
      return ctx.Error(r["nic"], absl::StrCat(f, ".nic"), absl::StrCat("NIC '", rail.nic,
                                                                        "' listed twice"));
    }
    if (r["gpu"]) {
      ASSIGN_OR_RETURN(uint64_t g, GetUint(ctx, r["gpu"], absl::StrCat(f, ".gpu"), 1023));
      rail.gpu = static_cast<uint32_t>(g);
    }
    rails.push_back(std::move(rail));
  }
  return rails;
}

absl::StatusOr<Expectations> GetExpectations(const Ctx& ctx, const YAML::Node& n) {
  RETURN_IF_ERROR(CheckKeys(ctx, n, "expect",
                            {"gpus", "rails", "link_gbps", "link_state", "nvidia_driver", "cuda_driver",
                             "rdma_core", "ofed", "hca_firmware", "min_mtu"}));
  Expectations e;
  for (const char* key : {"gpus", "rails"}) {
    if (!n[key]) continue;
    ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n[key], absl::StrCat("expect.", key), 4096));
    (std::string(key) == "gpus" ? e.gpus : e.rails) = static_cast<uint32_t>(v);
  }
  if (n["link_gbps"]) {
    ASSIGN_OR_RETURN(double v, GetRate(ctx, n["link_gbps"], "expect.link_gbps"));
    e.link_gbps = v;
  }
  if (n["link_state"]) {
    ASSIGN_OR_RETURN(e.link_state, GetString(ctx, n["link_state"], "expect.link_state"));
    static const std::set<std::string> kStates = {"PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE",
                                                  "PORT_ACTIVE_DEFER"};
    if (!kStates.count(e.link_state)) {
      return ctx.Error(n["link_state"], "expect.link_state",
                       absl::StrCat("expected a port state as ibv_devinfo prints it (PORT_ACTIVE, "
                                    "PORT_DOWN, PORT_INIT, PORT_ARMED), got '", e.link_state, "'"));
    }
  }
  const std::pair<const char*, std::string*> versions[] = {
      {"nvidia_driver", &e.nvidia_driver}, {"cuda_driver", &e.cuda_driver}, {"rdma_core", &e.rdma_core},
      {"ofed", &e.ofed}, {"hca_firmware", &e.hca_firmware}};
  for (const auto& [key, out] : versions) {
    if (!n[key]) continue;
    ASSIGN_OR_RETURN(*out, GetVersion(ctx, n[key], absl::StrCat("expect.", key)));
  }
  if (n["min_mtu"]) {
    ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n["min_mtu"], "expect.min_mtu", 65536));
    e.min_mtu_bytes = static_cast<uint32_t>(v);
  }
  return e;
}

absl::StatusOr<RailLabel> GetRailLabel(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  RailLabel l;
  if (n.IsSequence()) {
    if (n.size() == 0) return ctx.Error(n, field, "expected a name or a non-empty list of names, one per rail");
    for (size_t i = 0; i < n.size(); ++i) {
      ASSIGN_OR_RETURN(std::string v, GetString(ctx, n[i], absl::StrCat(field, "[", i, "]")));
      l.per_rail.push_back(std::move(v));
    }
    return l;
  }
  if (!n.IsScalar()) return ctx.Error(n, field, absl::StrCat("expected a name or a list of names, got ", Shown(n)));
  ASSIGN_OR_RETURN(l.every_rail, GetString(ctx, n, field));
  return l;
}

absl::Status CheckMemory(const Ctx& ctx, const YAML::Node& n, const std::string& m) {
  if (m == "host" || m == "hugepage" || m == "gpu" || m == "gpu-staged") return absl::OkStatus();
  return ctx.Error(n, "memory", absl::StrCat("expected host, hugepage, gpu or gpu-staged, got '",
                                             m, "'"));
}

absl::Status AddNode(const Ctx& ctx, const YAML::Node& at, Node node, std::set<std::string>* names,
                     Inventory* inv) {
  if (!IsPrintable(node.name)) {
    return ctx.Error(at, "nodes", absl::StrCat("node name '", Printable(node.name),
                                               "' holds control bytes or is longer than 256"));
  }
  if (!names->insert(node.name).second) {
    return ctx.Error(at, "nodes", absl::StrCat("node '", node.name, "' is listed twice"));
  }
  // Two names for one agent would test it against itself.
  for (const Node& other : inv->nodes) {
    if (other.address == node.address && !node.name_from_agent) {
      return ctx.Error(at, "nodes", absl::StrCat("node '", node.name, "' has the address of node '", other.name,
                                                 "' (", node.address, "): one agent cannot be two nodes"));
    }
  }
  inv->nodes.push_back(std::move(node));
  return absl::OkStatus();
}

std::string WithPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

}  // namespace

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
  if (address.find(':') != absl::string_view::npos && !absl::StartsWith(address, "[") &&
      p.empty() && address.back() == ':') {
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

// What the top level gives every node unless the node says otherwise.
struct NodeDefaults {
  int port = kDefaultAgentPort;
  double link_gbps = 0;
  std::vector<Rail> rails;
};

// The top-level keys but nodes: the defaults of every node, and the
// inventory's memory, qos, tls and expect.
absl::StatusOr<NodeDefaults> ParseTopLevel(const Ctx& ctx, const YAML::Node& root, Inventory& inv) {
  NodeDefaults d;
  if (root["port"]) {
    ASSIGN_OR_RETURN(uint64_t p, GetUint(ctx, root["port"], "port", 65535));
    if (p == 0) return ctx.Error(root["port"], "port", "must be in 1..65535");
    d.port = static_cast<int>(p);
  }
  if (root["link_gbps"]) {
    ASSIGN_OR_RETURN(d.link_gbps, GetRate(ctx, root["link_gbps"], "link_gbps"));
  }
  if (root["memory"]) {
    ASSIGN_OR_RETURN(inv.memory, GetString(ctx, root["memory"], "memory"));
    RETURN_IF_ERROR(CheckMemory(ctx, root["memory"], inv.memory));
  }
  if (root["qos"]) {
    ASSIGN_OR_RETURN(inv.qos, GetQos(ctx, root["qos"]));
  }
  if (root["tls"]) {
    ASSIGN_OR_RETURN(inv.tls, GetTls(ctx, root["tls"]));
    inv.has_tls = true;
  }
  if (root["rails"]) {
    ASSIGN_OR_RETURN(d.rails, GetRails(ctx, root["rails"], "rails"));
  }
  if (root["expect"]) {
    ASSIGN_OR_RETURN(inv.expect, GetExpectations(ctx, root["expect"]));
  }
  return d;
}

// What one entry of nodes gives each of its nodes: rails, link rate, leaf
// and spine group (checked against each other), and its line.
absl::StatusOr<Node> ParseEntryCommon(const Ctx& ctx, const YAML::Node& n, const std::string& f,
                                      const NodeDefaults& d) {
  RETURN_IF_ERROR(CheckKeys(
      ctx, n, f, {"name", "address", "hostlist", "dns", "rails", "link_gbps", "leaf", "spine_group"}));
  Node proto;
  proto.line = n.Mark().line + 1;
  proto.link_gbps = d.link_gbps;
  proto.rails = d.rails;
  if (n["rails"]) {
    ASSIGN_OR_RETURN(proto.rails, GetRails(ctx, n["rails"], f + ".rails"));
  }
  if (n["link_gbps"]) {
    ASSIGN_OR_RETURN(proto.link_gbps, GetRate(ctx, n["link_gbps"], f + ".link_gbps"));
  }
  if (n["leaf"]) {
    ASSIGN_OR_RETURN(proto.leaf, GetRailLabel(ctx, n["leaf"], f + ".leaf"));
  }
  if (n["spine_group"]) {
    ASSIGN_OR_RETURN(proto.spine_group, GetRailLabel(ctx, n["spine_group"], f + ".spine_group"));
    if (proto.leaf.empty())
      return ctx.Error(n["spine_group"], f + ".spine_group", "needs leaf: (the spine group of which leaf?)");
  }
  if (!proto.leaf.per_rail.empty() && !proto.rails.empty() &&
      proto.leaf.per_rail.size() != proto.rails.size()) {
    return ctx.Error(n["leaf"], f + ".leaf",
                     absl::StrCat(proto.leaf.per_rail.size(), " leaves for ", proto.rails.size(),
                                  " rails: give one per rail, or one name for all"));
  }
  if (int forms = !!n["hostlist"] + !!n["dns"] + (n["name"] || n["address"]); forms > 1) {
    return ctx.Error(n, f, "give one of hostlist, dns or name/address");
  }
  return proto;
}

// dns: every address the name resolves to, each a node like `proto`.
absl::Status AddDnsNodes(const Ctx& ctx, const YAML::Node& n, const std::string& f, int port,
                         const Resolver& resolver, const Node& proto, std::set<std::string>* names,
                         Inventory* inv) {
  ASSIGN_OR_RETURN(std::string spec, GetString(ctx, n["dns"], f + ".dns"));
  auto found = NodesFromDns(spec, port, resolver);
  if (!found.ok()) return ctx.Error(n["dns"], f + ".dns", found.status().message());
  for (Node& node : *found) {
    node.rails = proto.rails;
    node.link_gbps = proto.link_gbps;
    node.line = proto.line;
    node.leaf = proto.leaf;
    node.spine_group = proto.spine_group;
    RETURN_IF_ERROR(AddNode(ctx, n["dns"], std::move(node), names, inv));
  }
  return absl::OkStatus();
}

// hostlist: every host the expression names, each a node like `proto`.
absl::Status AddHostlistNodes(const Ctx& ctx, const YAML::Node& n, const std::string& f, int port,
                              const Node& proto, std::set<std::string>* names, Inventory* inv) {
  ASSIGN_OR_RETURN(std::string expr, GetString(ctx, n["hostlist"], f + ".hostlist"));
  auto hosts = ExpandHostlist(expr);
  if (!hosts.ok()) return ctx.Error(n["hostlist"], f + ".hostlist", hosts.status().message());
  for (const auto& h : *hosts) {
    Node node = proto;
    node.name = h;
    node.address = WithPort(h, port);
    RETURN_IF_ERROR(AddNode(ctx, n["hostlist"], std::move(node), names, inv));
  }
  return absl::OkStatus();
}

// name (and address): one node.
absl::Status AddNamedNode(const Ctx& ctx, const YAML::Node& n, const std::string& f, int port, Node proto,
                          std::set<std::string>* names, Inventory* inv) {
  if (!n["name"]) return ctx.Error(n, f + ".name", "missing (or give hostlist)");
  ASSIGN_OR_RETURN(proto.name, GetString(ctx, n["name"], f + ".name"));
  if (n["address"]) {
    ASSIGN_OR_RETURN(std::string addr, GetString(ctx, n["address"], f + ".address"));
    std::string host;
    int p = -1;
    if (auto st = SplitHostPort(addr, &host, &p); !st.ok()) {
      return ctx.Error(n["address"], f + ".address", st.message());
    }
    proto.address = p < 0 ? WithPort(host, port) : addr;
  } else {
    proto.address = WithPort(proto.name, port);
  }
  return AddNode(ctx, n["name"], std::move(proto), names, inv);
}

}  // namespace

absl::StatusOr<Inventory> ParseInventoryYaml(absl::string_view text, absl::string_view source,
                                             const Resolver& resolver) {
  Ctx ctx(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
  RETURN_IF_ERROR(
      CheckKeys(ctx, root, "", {"port", "link_gbps", "memory", "tls", "rails", "expect", "qos", "nodes"}));
  Inventory inv;
  inv.source = std::string(source);
  ASSIGN_OR_RETURN(const NodeDefaults defaults, ParseTopLevel(ctx, root, inv));

  const YAML::Node nodes = root["nodes"];
  if (!nodes) return absl::InvalidArgumentError(absl::StrCat(source, ": nodes: missing"));
  if (!nodes.IsSequence() || nodes.size() == 0) {
    return ctx.Error(nodes, "nodes", absl::StrCat("expected a non-empty list, got ", Shown(nodes)));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    std::string f = absl::StrCat("nodes[", i, "]");
    ASSIGN_OR_RETURN(Node proto, ParseEntryCommon(ctx, n, f, defaults));
    if (n["dns"]) {
      RETURN_IF_ERROR(AddDnsNodes(ctx, n, f, defaults.port, resolver, proto, &names, &inv));
    } else if (n["hostlist"]) {
      RETURN_IF_ERROR(AddHostlistNodes(ctx, n, f, defaults.port, proto, &names, &inv));
    } else {
      RETURN_IF_ERROR(AddNamedNode(ctx, n, f, defaults.port, std::move(proto), &names, &inv));
    }
  }
  return inv;
}

absl::StatusOr<Inventory> LoadInventoryFile(const std::string& path, const Resolver& resolver) {
  auto text = ReadBoundedFile(path);  // a FIFO or /dev/zero is refused, not read
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat("inventory ", text.status().message()));
  return ParseInventoryYaml(*text, path, resolver);
}

namespace {

absl::StatusOr<Inventory> FromList(absl::string_view agents, int default_port,
                                   const std::string& flag, const Resolver* resolver);

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
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", inv->nodes.size(), " nodes; a plan holds at most ",
                                                   limits::kMaxNodes));
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

absl::StatusOr<Inventory> FromList(absl::string_view agents, int default_port,
                                   const std::string& flag, const Resolver* resolver) {
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
    if (size_t colon = e.rfind(':');
        colon != absl::string_view::npos && e.find(':') == colon && e.find(']', colon) == absl::string_view::npos) {
      RETURN_IF_ERROR(SplitHostPort(e, &host, &port));
      hostpart = host;
    } else if (absl::StartsWith(e, "[") && e.find(':') != absl::string_view::npos) {
      RETURN_IF_ERROR(SplitHostPort(e, &host, &port));
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
  RETURN_IF_ERROR(KeyByAddress(flag, &inv));
  return inv;
}

}  // namespace


std::string RailLabel::Of(size_t rail) const {
  if (!per_rail.empty()) return rail < per_rail.size() ? per_rail[rail] : "";
  std::string out = every_rail;
  const std::string index = std::to_string(rail);
  for (size_t p = out.find("{rail}"); p != std::string::npos; p = out.find("{rail}", p + index.size())) {
    out.replace(p, 6, index);
  }
  return out;
}

size_t MaxRails(const Inventory& inventory) {
  size_t m = 0;
  for (const auto& n : inventory.nodes) m = std::max(m, n.rails.size());
  return m;
}

}  // namespace gdrbench::controller::inventory
