#include "controller/inventory/inventory.h"

#include <charconv>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_read.h"
#include "common/limits.h"
#include "common/printable.h"
#include "common/status.h"
#include "common/sweep_limits.h"
#include "controller/inventory/addresses.h"
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
    GDR_RETURN_IF_ERROR(CheckKeys(ctx, r, f, {"nic", "gpu"}));
    Rail rail;
    if (!r["nic"]) return ctx.Error(r, absl::StrCat(f, ".nic"), "missing");
    GDR_ASSIGN_OR_RETURN(rail.nic, GetString(ctx, r["nic"], absl::StrCat(f, ".nic")));
    if (!nics.insert(rail.nic).second) {
      return ctx.Error(r["nic"], absl::StrCat(f, ".nic"), absl::StrCat("NIC '", rail.nic,
                                                                        "' listed twice"));
    }
    if (r["gpu"]) {
      GDR_ASSIGN_OR_RETURN(uint64_t g, GetUint(ctx, r["gpu"], absl::StrCat(f, ".gpu"), 1023));
      rail.gpu = static_cast<uint32_t>(g);
    }
    rails.push_back(std::move(rail));
  }
  return rails;
}

absl::StatusOr<Expectations> GetExpectations(const Ctx& ctx, const YAML::Node& n) {
  GDR_RETURN_IF_ERROR(CheckKeys(ctx, n, "expect",
                                {"gpus", "rails", "link_gbps", "link_state", "nvidia_driver", "cuda_driver",
                                 "rdma_core", "ofed", "hca_firmware", "min_mtu"}));
  Expectations e;
  for (const char* key : {"gpus", "rails"}) {
    if (!n[key]) continue;
    GDR_ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n[key], absl::StrCat("expect.", key), 4096));
    (std::string(key) == "gpus" ? e.gpus : e.rails) = static_cast<uint32_t>(v);
  }
  if (n["link_gbps"]) {
    GDR_ASSIGN_OR_RETURN(double v, GetRate(ctx, n["link_gbps"], "expect.link_gbps"));
    e.link_gbps = v;
  }
  if (n["link_state"]) {
    GDR_ASSIGN_OR_RETURN(e.link_state, GetString(ctx, n["link_state"], "expect.link_state"));
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
    GDR_ASSIGN_OR_RETURN(*out, GetVersion(ctx, n[key], absl::StrCat("expect.", key)));
  }
  if (n["min_mtu"]) {
    GDR_ASSIGN_OR_RETURN(uint64_t v, GetUint(ctx, n["min_mtu"], "expect.min_mtu", 65536));
    e.min_mtu_bytes = static_cast<uint32_t>(v);
  }
  return e;
}

absl::StatusOr<RailLabel> GetRailLabel(const Ctx& ctx, const YAML::Node& n, absl::string_view field) {
  RailLabel l;
  if (n.IsSequence()) {
    if (n.size() == 0) return ctx.Error(n, field, "expected a name or a non-empty list of names, one per rail");
    for (size_t i = 0; i < n.size(); ++i) {
      GDR_ASSIGN_OR_RETURN(std::string v, GetString(ctx, n[i], absl::StrCat(field, "[", i, "]")));
      l.per_rail.push_back(std::move(v));
    }
    return l;
  }
  if (!n.IsScalar()) return ctx.Error(n, field, absl::StrCat("expected a name or a list of names, got ", Shown(n)));
  GDR_ASSIGN_OR_RETURN(l.every_rail, GetString(ctx, n, field));
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
    GDR_ASSIGN_OR_RETURN(uint64_t p, GetUint(ctx, root["port"], "port", 65535));
    if (p == 0) return ctx.Error(root["port"], "port", "must be in 1..65535");
    d.port = static_cast<int>(p);
  }
  if (root["link_gbps"]) {
    GDR_ASSIGN_OR_RETURN(d.link_gbps, GetRate(ctx, root["link_gbps"], "link_gbps"));
  }
  if (root["memory"]) {
    GDR_ASSIGN_OR_RETURN(inv.memory, GetString(ctx, root["memory"], "memory"));
    GDR_RETURN_IF_ERROR(CheckMemory(ctx, root["memory"], inv.memory));
  }
  if (root["qos"]) {
    GDR_ASSIGN_OR_RETURN(inv.qos, GetQos(ctx, root["qos"]));
  }
  if (root["tls"]) {
    GDR_ASSIGN_OR_RETURN(inv.tls, GetTls(ctx, root["tls"]));
    inv.has_tls = true;
  }
  if (root["rails"]) {
    GDR_ASSIGN_OR_RETURN(d.rails, GetRails(ctx, root["rails"], "rails"));
  }
  if (root["expect"]) {
    GDR_ASSIGN_OR_RETURN(inv.expect, GetExpectations(ctx, root["expect"]));
  }
  return d;
}

// What one entry of nodes gives each of its nodes: rails, link rate, leaf
// and spine group (checked against each other), and its line.
absl::StatusOr<Node> ParseEntryCommon(const Ctx& ctx, const YAML::Node& n, const std::string& f,
                                      const NodeDefaults& d) {
  GDR_RETURN_IF_ERROR(CheckKeys(
      ctx, n, f, {"name", "address", "hostlist", "dns", "rails", "link_gbps", "leaf", "spine_group"}));
  Node proto;
  proto.line = n.Mark().line + 1;
  proto.link_gbps = d.link_gbps;
  proto.rails = d.rails;
  if (n["rails"]) {
    GDR_ASSIGN_OR_RETURN(proto.rails, GetRails(ctx, n["rails"], f + ".rails"));
  }
  if (n["link_gbps"]) {
    GDR_ASSIGN_OR_RETURN(proto.link_gbps, GetRate(ctx, n["link_gbps"], f + ".link_gbps"));
  }
  if (n["leaf"]) {
    GDR_ASSIGN_OR_RETURN(proto.leaf, GetRailLabel(ctx, n["leaf"], f + ".leaf"));
  }
  if (n["spine_group"]) {
    GDR_ASSIGN_OR_RETURN(proto.spine_group, GetRailLabel(ctx, n["spine_group"], f + ".spine_group"));
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
  GDR_ASSIGN_OR_RETURN(std::string spec, GetString(ctx, n["dns"], f + ".dns"));
  auto found = NodesFromDns(spec, port, resolver);
  if (!found.ok()) return ctx.Error(n["dns"], f + ".dns", found.status().message());
  for (Node& node : *found) {
    node.rails = proto.rails;
    node.link_gbps = proto.link_gbps;
    node.line = proto.line;
    node.leaf = proto.leaf;
    node.spine_group = proto.spine_group;
    GDR_RETURN_IF_ERROR(AddNode(ctx, n["dns"], std::move(node), names, inv));
  }
  return absl::OkStatus();
}

// hostlist: every host the expression names, each a node like `proto`.
absl::Status AddHostlistNodes(const Ctx& ctx, const YAML::Node& n, const std::string& f, int port,
                              const Node& proto, std::set<std::string>* names, Inventory* inv) {
  GDR_ASSIGN_OR_RETURN(std::string expr, GetString(ctx, n["hostlist"], f + ".hostlist"));
  auto hosts = ExpandHostlist(expr);
  if (!hosts.ok()) return ctx.Error(n["hostlist"], f + ".hostlist", hosts.status().message());
  for (const auto& h : *hosts) {
    Node node = proto;
    node.name = h;
    node.address = WithPort(h, port);
    GDR_RETURN_IF_ERROR(AddNode(ctx, n["hostlist"], std::move(node), names, inv));
  }
  return absl::OkStatus();
}

// name (and address): one node.
absl::Status AddNamedNode(const Ctx& ctx, const YAML::Node& n, const std::string& f, int port, Node proto,
                          std::set<std::string>* names, Inventory* inv) {
  if (!n["name"]) return ctx.Error(n, f + ".name", "missing (or give hostlist)");
  GDR_ASSIGN_OR_RETURN(proto.name, GetString(ctx, n["name"], f + ".name"));
  if (n["address"]) {
    GDR_ASSIGN_OR_RETURN(std::string addr, GetString(ctx, n["address"], f + ".address"));
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
  GDR_RETURN_IF_ERROR(
      CheckKeys(ctx, root, "", {"port", "link_gbps", "memory", "tls", "rails", "expect", "qos", "nodes"}));
  Inventory inv;
  inv.source = std::string(source);
  GDR_ASSIGN_OR_RETURN(const NodeDefaults defaults, ParseTopLevel(ctx, root, inv));

  const YAML::Node nodes = root["nodes"];
  if (!nodes) return absl::InvalidArgumentError(absl::StrCat(source, ": nodes: missing"));
  if (!nodes.IsSequence() || nodes.size() == 0) {
    return ctx.Error(nodes, "nodes", absl::StrCat("expected a non-empty list, got ", Shown(nodes)));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    std::string f = absl::StrCat("nodes[", i, "]");
    GDR_ASSIGN_OR_RETURN(Node proto, ParseEntryCommon(ctx, n, f, defaults));
    if (n["dns"]) {
      GDR_RETURN_IF_ERROR(AddDnsNodes(ctx, n, f, defaults.port, resolver, proto, &names, &inv));
    } else if (n["hostlist"]) {
      GDR_RETURN_IF_ERROR(AddHostlistNodes(ctx, n, f, defaults.port, proto, &names, &inv));
    } else {
      GDR_RETURN_IF_ERROR(AddNamedNode(ctx, n, f, defaults.port, std::move(proto), &names, &inv));
    }
  }
  return inv;
}

absl::StatusOr<Inventory> LoadInventoryFile(const std::string& path, const Resolver& resolver) {
  auto text = ReadBoundedFile(path);  // a FIFO or /dev/zero is refused, not read
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat("inventory ", text.status().message()));
  return ParseInventoryYaml(*text, path, resolver);
}


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
