#include "agent/topology/topology.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"

namespace gdrbench::agent::topology {
namespace {

// The switch a bridge function belongs to, keyed by its upstream port.
// chain = ancestors (root port first); index 0 is the root port, odd indexes
// are switch upstream ports, even ones (>= 2) their downstream ports.
std::string SwitchOf(const std::vector<std::string>& chain, size_t i) {
  if (i == 0) return "host:" + chain[0];
  return (i % 2 == 1) ? chain[i] : chain[i - 1];
}

}  // namespace

const char* PathTypeName(PathType p) {
  switch (p) {
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
  }
  return "?";
}

const Relation* Topology::Find(int gpu_index, const std::string& nic) const {
  for (const auto& r : relations) {
    if (r.gpu_index == gpu_index && r.nic == nic) return &r;
  }
  return nullptr;
}

PathType Classify(const PciDevice& a, const PciDevice& b, std::vector<std::string>* bridges) {
  if (bridges) bridges->clear();
  if (a.root_complex != b.root_complex) {
    // Unknown NUMA (-1) on either side: the platform has one node.
    bool same_numa = a.numa_node == b.numa_node || a.numa_node < 0 || b.numa_node < 0;
    return same_numa ? PathType::kNode : PathType::kSys;
  }
  const auto& ca = a.ancestors;
  const auto& cb = b.ancestors;
  size_t common = 0;
  while (common < ca.size() && common < cb.size() && ca[common] == cb[common]) ++common;
  if (common == 0) {
    // Different root ports (or devices on the root bus): through the host bridge.
    return PathType::kPhb;
  }
  // Bridges on the path: the lowest common one, then each side below it.
  std::set<std::string> switches;
  size_t lca = common - 1;
  auto add = [&](const std::vector<std::string>& chain, size_t i) {
    if (bridges) bridges->push_back(chain[i]);
    switches.insert(SwitchOf(chain, i));
  };
  for (size_t i = ca.size(); i-- > common;) add(ca, i);
  add(ca, lca);
  for (size_t i = common; i < cb.size(); ++i) add(cb, i);
  switches.erase("host:" + ca[0]);  // a shared root port is not a switch
  return switches.size() <= 1 ? PathType::kPix : PathType::kPxb;
}

const Rail* Topology::RailOf(const std::string& nic) const {
  for (const auto& r : rails) {
    if (r.nic == nic) return &r;
  }
  return nullptr;
}

std::vector<const Relation*> Topology::Nearest(int gpu_index) const {
  std::vector<const Relation*> best;
  for (const auto& r : relations) {
    if (r.gpu_index != gpu_index) continue;
    if (!best.empty() && r.path > best[0]->path) continue;
    if (!best.empty() && r.path < best[0]->path) best.clear();
    best.push_back(&r);
  }
  return best;
}

void AssignRails(Topology& t, const std::vector<std::string>& named) {
  t.rails.clear();
  t.not_rails.clear();
  auto is_named = [&](const std::string& n) {
    return std::find(named.begin(), named.end(), n) != named.end();
  };
  // Rail NICs: each GPU's nearest ones when they are at most PHB away.
  std::set<std::string> nearest;
  for (const auto& g : t.gpus) {
    for (const Relation* r : t.Nearest(g.index)) {
      if (r->path <= PathType::kPhb) nearest.insert(r->nic);
    }
  }
  std::map<int, int> load;  // rails given to each GPU so far
  for (const auto& nic : t.nics) {
    bool rail = nearest.count(nic.name) > 0 || is_named(nic.name);
    const Relation* best = nullptr;
    for (const auto& r : t.relations) {
      if (r.nic != nic.name) continue;
      if (best == nullptr || r.path < best->path ||
          (r.path == best->path && load[r.gpu_index] < load[best->gpu_index])) {
        best = &r;
      }
    }
    if (rail) {
      Rail out{nic.name, best ? best->gpu_index : -1, best ? best->path : PathType::kSys,
               nearest.count(nic.name) == 0};
      if (best) ++load[best->gpu_index];
      t.rails.push_back(out);
      continue;
    }
    // The reason names the closest GPU with the lowest index (not the
    // load-balanced choice above, which only matters for rails).
    for (const auto& r : t.relations) {
      if (best != nullptr && r.nic == nic.name &&
          (r.path < best->path || (r.path == best->path && r.gpu_index < best->gpu_index))) {
        best = &r;
      }
    }
    std::string why;
    if (!nic.has_pci) {
      why = "software RDMA device (no PCI function)";
    } else if (t.gpus.empty()) {
      why = "no GPU on this node";
    } else if (best != nullptr) {
      why = absl::StrCat("closest GPU", best->gpu_index, " is ", PathTypeName(best->path),
                         best->path <= PathType::kPhb ? ", but that GPU has a closer NIC" : "");
    }
    t.not_rails.push_back(NotRail{nic.name, why});
  }
}

absl::StatusOr<Topology> DiscoverTopology(const FsRoot& fs, const std::vector<std::string>& named) {
  Topology t;
  auto functions = ListPciFunctions(fs);
  if (!functions.ok()) {
    t.notes.push_back(absl::StrCat("no PCI bus in sysfs: ", functions.status().message()));
  } else {
    for (const auto& bdf : *functions) {
      // Read the class first: most functions are not GPUs.
      auto cls = fs.ReadLine(absl::StrCat("/sys/bus/pci/devices/", bdf, "/class"));
      auto ven = fs.ReadLine(absl::StrCat("/sys/bus/pci/devices/", bdf, "/vendor"));
      if (!cls.ok() || !ven.ok() || *ven != "0x10de" || cls->rfind("0x03", 0) != 0) continue;
      GDR_ASSIGN_OR_RETURN(PciDevice d, ReadPciDevice(fs, bdf));
      t.gpus.push_back(Gpu{static_cast<int>(t.gpus.size()), std::move(d)});
    }
    if (t.gpus.empty()) t.notes.push_back("no NVIDIA GPU on the PCI bus");
  }
  auto ibdevs = fs.ListDir("/sys/class/infiniband");
  if (!ibdevs.ok()) {
    t.notes.push_back("no RDMA devices: /sys/class/infiniband is absent");
  } else {
    for (const auto& name : *ibdevs) {
      Nic nic;
      nic.name = name;
      auto real = fs.RealPath(absl::StrCat("/sys/class/infiniband/", name, "/device"));
      if (real.ok()) {
        std::string last = real->substr(real->rfind('/') + 1);
        if (IsBdf(last)) {
          auto d = ReadPciDevice(fs, last);
          if (d.ok()) {
            nic.has_pci = true;
            nic.pci = std::move(*d);
          } else {
            t.notes.push_back(absl::StrCat(name, ": ", d.status().message()));
          }
        }
      }
      if (!nic.has_pci) {
        t.notes.push_back(absl::StrCat(name, " has no PCI function (software RDMA device)"));
      }
      t.nics.push_back(std::move(nic));
    }
  }
  for (const auto& g : t.gpus) {
    for (const auto& n : t.nics) {
      if (!n.has_pci) continue;
      Relation r;
      r.gpu_index = g.index;
      r.nic = n.name;
      r.path = Classify(g.pci, n.pci, &r.bridges);
      t.relations.push_back(std::move(r));
    }
  }
  AssignRails(t, named);
  return t;
}

std::string FormatMatrix(const Topology& topo) {
  std::vector<const Nic*> nics;
  for (const auto& n : topo.nics) {
    if (n.has_pci) nics.push_back(&n);
  }
  std::string out = absl::StrFormat("%-6s", "");
  for (size_t j = 0; j < nics.size(); ++j) out += absl::StrFormat("%-6s", absl::StrCat("NIC", j));
  out += "\n";
  for (const auto& g : topo.gpus) {
    out += absl::StrFormat("%-6s", absl::StrCat("GPU", g.index));
    for (const Nic* n : nics) {
      const Relation* r = topo.Find(g.index, n->name);
      out += absl::StrFormat("%-6s", r ? PathTypeName(r->path) : "?");
    }
    out += "\n";
  }
  out += "\nNIC Legend:\n\n";
  for (size_t j = 0; j < nics.size(); ++j) absl::StrAppend(&out, "  NIC", j, ": ", nics[j]->name, "\n");
  return out;
}

}  // namespace gdrbench::agent::topology
