#include "controller/topology/lldpctl.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "controller/topology/cable_book.h"
#include "yaml-cpp/yaml.h"

namespace gdrbench::controller::topology {
namespace {

// yaml-cpp reads JSON (a YAML 1.2 subset) and keeps each node's line.
std::string At(const std::string& source, const YAML::Node& n) {
  return absl::StrCat(source, ":", n.Mark().line + 1);
}

absl::Status Bad(const std::string& source, const YAML::Node& n, const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(At(source, n), ": ", path, ": ", why));
}

std::string Scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

// The chassis map: {"NAME": {"id": ...}} or, without a system name, {"id": ...}.
// A missing member has no position of its own: errors point at `entry`.
absl::StatusOr<std::string> ChassisName(const std::string& source, const YAML::Node& entry, const std::string& path) {
  const YAML::Node chassis = entry["chassis"];
  if (!chassis || !chassis.IsMap() || chassis.size() == 0) return Bad(source, entry, path, "no chassis");
  if (chassis["id"] && chassis["id"].IsMap()) {
    const std::string id = Scalar(chassis["id"]["value"]);
    if (id.empty()) return Bad(source, chassis, path + ".id", "no value");
    return id;
  }
  return chassis.begin()->first.as<std::string>();
}

absl::StatusOr<std::string> PortName(const std::string& source, const YAML::Node& entry, const std::string& path) {
  const YAML::Node port = entry["port"];
  if (!port || !port.IsMap()) return Bad(source, entry, path, "no port");
  const YAML::Node id = port["id"];
  if (!id || !id.IsMap()) return Bad(source, port, path, "no id");
  const std::string type = Scalar(id["type"]), value = Scalar(id["value"]);
  if ((type == "ifname" || type == "local") && !value.empty()) return value;
  const std::string descr = Scalar(port["descr"]);
  if (!descr.empty()) return descr;
  return Bad(source, port, path,
             absl::StrCat("its id is a ", type.empty() ? "value of no type" : type,
                          " and it has no descr to name the port by"));
}

absl::Status Interface(const std::string& source, const std::string& name, const YAML::Node& entry,
                       std::vector<LldpNeighbor>& out) {
  const std::string path = "lldp.interface." + name;
  if (!entry.IsMap()) return Bad(source, entry, path, "not an object");
  auto chassis = ChassisName(source, entry, path + ".chassis");
  if (!chassis.ok()) return chassis.status();
  auto port = PortName(source, entry, path + ".port");
  if (!port.ok()) return port.status();
  out.push_back(LldpNeighbor{name, *chassis, *port, At(source, entry)});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<LldpNeighbor>> ParseLldpctlJson(const std::string& text, const std::string& source) {
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", e.mark.line + 1, ": not JSON: ", e.msg));
  }
  const YAML::Node root = loaded;
  if (!root.IsMap() || !root["lldp"]) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no \"lldp\" object: not lldpctl -f json output"));
  }
  std::vector<LldpNeighbor> out;
  const YAML::Node lldp = root["lldp"];
  if (!lldp.IsMap()) return Bad(source, lldp, "lldp", "not an object");
  const YAML::Node interfaces = lldp["interface"];
  if (!interfaces) return out;  // "lldp": {}: no neighbour heard
  std::vector<std::pair<std::string, YAML::Node>> entries;
  if (interfaces.IsMap()) {
    for (const auto& kv : interfaces) entries.emplace_back(kv.first.as<std::string>(), kv.second);
  } else if (interfaces.IsSequence()) {
    for (const auto& item : interfaces) {
      if (!item.IsMap() || item.size() != 1) return Bad(source, item, "lldp.interface[]", "not a one-key object");
      entries.emplace_back(item.begin()->first.as<std::string>(), item.begin()->second);
    }
  } else {
    return Bad(source, interfaces, "lldp.interface", "neither an object nor a list");
  }
  for (const auto& [name, entry] : entries) {
    if (auto st = Interface(source, name, entry, out); !st.ok()) return st;
  }
  return out;
}

absl::StatusOr<Fabric> FabricFromLldp(const std::vector<LldpSystem>& systems, const std::set<std::string>& hosts) {
  if (hosts.empty()) {
    return absl::InvalidArgumentError("an LLDP topology needs the inventory: LLDP does not say which systems are hosts");
  }
  Fabric fabric;
  auto port_of = [&](const std::string& system, const std::string& port, const std::string& where) {
    Device& d = fabric.devices[system];
    if (d.id.empty()) {
      d.id = system;
      d.description = system;
      d.kind = hosts.count(system) ? DeviceKind::kHost : DeviceKind::kSwitch;
      d.where = where;
    }
    for (const auto& [number, name] : d.port_names) {
      if (name == port) return PortRef{system, number};
    }
    const int number = static_cast<int>(d.port_names.size()) + 1;
    d.port_names[number] = port;
    return PortRef{system, number};
  };
  CableBook book([&](const PortRef& p) {
    return absl::StrCat(p.device, "[", fabric.devices.at(p.device).port_names.at(p.port), "]");
  });
  for (const LldpSystem& s : systems) {
    for (const LldpNeighbor& n : s.neighbors) {
      const PortRef self = port_of(s.name, n.local_port, n.where);
      const PortRef peer = port_of(n.chassis, n.port, n.where);
      if (auto st = book.Add(self, peer, "", 0, n.where, fabric.cables); !st.ok()) return st;
    }
  }
  AssignTiers(fabric);
  return fabric;
}

absl::StatusOr<Fabric> LoadLldpDir(const std::string& dir, const std::set<std::string>& hosts) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read the LLDP directory ", dir, ": ", ec.message()));
  if (files.empty()) return absl::NotFoundError(absl::StrCat("no NAME.json (lldpctl -f json of NAME) in ", dir));
  std::sort(files.begin(), files.end());
  std::vector<LldpSystem> systems;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", f.string()));
    std::stringstream text;
    text << in.rdbuf();
    auto neighbors = ParseLldpctlJson(text.str(), f.string());
    if (!neighbors.ok()) return neighbors.status();
    systems.push_back(LldpSystem{f.stem().string(), std::move(*neighbors)});
  }
  return FabricFromLldp(systems, hosts);
}

}  // namespace gdrbench::controller::topology
