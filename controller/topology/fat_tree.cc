#include "controller/topology/fat_tree.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gdrbench::controller::topology {
namespace {

class Builder {
 public:
  explicit Builder(Fabric& f) : f_(f) {}

  void Add(const std::string& id, DeviceKind kind, int tier, const std::string& description) {
    Device d;
    d.id = id;
    d.kind = kind;
    d.tier = tier;
    d.description = description;
    d.where = "generated";
    f_.devices.emplace(id, std::move(d));
  }

  void Cable(const std::string& lower, int lower_port, const std::string& upper, int upper_port, int tier,
             double gbps) {
    topology::Cable c;
    c.lower = PortRef{lower, lower_port};
    c.upper = PortRef{upper, upper_port};
    c.gbps = gbps;
    c.link = "4xNDR";
    c.where = "generated";
    c.tier = tier;
    f_.cables.push_back(std::move(c));
  }

 private:
  Fabric& f_;
};

absl::Status Check(const FatTreeShape& s) {
  if (s.nodes <= 0 || s.rails <= 0 || s.hosts_per_leaf <= 0 || s.nodes % s.hosts_per_leaf != 0) {
    return absl::InvalidArgumentError(absl::StrCat("fat tree: ", s.nodes, " nodes are not whole leaves of ",
                                                   s.hosts_per_leaf));
  }
  const int leaves = s.nodes / s.hosts_per_leaf;
  if (s.leaves_per_pod <= 0 || leaves % s.leaves_per_pod != 0) {
    return absl::InvalidArgumentError(absl::StrCat("fat tree: ", leaves, " leaves are not whole pods of ",
                                                   s.leaves_per_pod));
  }
  if (s.spines_per_pod <= 0 || s.leaf_spine_links <= 0 || s.spines_per_pod * s.leaf_spine_links != s.hosts_per_leaf) {
    return absl::InvalidArgumentError("fat tree: a leaf's uplinks (spines x links) must equal its hosts");
  }
  if (s.cores_per_group > 0 && s.cores_per_group * s.spine_core_links != s.leaves_per_pod * s.leaf_spine_links) {
    return absl::InvalidArgumentError("fat tree: a spine's uplinks (cores x links) must equal its down cables");
  }
  return absl::OkStatus();
}

}  // namespace

FatTreeShape TwoTierShape(int nodes, int rails) {
  FatTreeShape s;
  s.nodes = nodes;
  s.rails = rails;
  s.leaves_per_pod = nodes / s.hosts_per_leaf;
  return s;
}

FatTreeShape ThreeTierShape(int nodes, int rails) {
  FatTreeShape s;
  s.nodes = nodes;
  s.rails = rails;
  s.leaves_per_pod = 32;
  s.spines_per_pod = 32;
  s.leaf_spine_links = 1;
  s.cores_per_group = 8;
  s.spine_core_links = 4;
  return s;
}

absl::StatusOr<Fabric> GenerateFatTree(const FatTreeShape& s) {
  if (auto st = Check(s); !st.ok()) return st;
  Fabric f;
  f.cables.reserve(static_cast<size_t>(s.nodes) * s.rails * (s.cores_per_group > 0 ? 3 : 2));
  Builder b(f);
  const int leaves = s.nodes / s.hosts_per_leaf, pods = leaves / s.leaves_per_pod;
  const int spine_down = s.leaves_per_pod * s.leaf_spine_links;
  for (int r = 0; r < s.rails; ++r) {
    auto leaf = [&](int l) { return absl::StrFormat("S-r%d-l%04d", r, l); };
    auto spine = [&](int p, int k) { return absl::StrFormat("S-r%d-p%03d-s%02d", r, p, k); };
    auto core = [&](int g, int k) { return absl::StrFormat("S-r%d-g%02d-c%02d", r, g, k); };
    for (int l = 0; l < leaves; ++l) b.Add(leaf(l), DeviceKind::kSwitch, 1, absl::StrCat("rail ", r, " leaf ", l));
    for (int p = 0; p < pods; ++p) {
      for (int k = 0; k < s.spines_per_pod; ++k) b.Add(spine(p, k), DeviceKind::kSwitch, 2, spine(p, k));
    }
    for (int g = 0; s.cores_per_group > 0 && g < s.spines_per_pod; ++g) {
      for (int k = 0; k < s.cores_per_group; ++k) b.Add(core(g, k), DeviceKind::kSwitch, 3, core(g, k));
    }
    for (int n = 0; n < s.nodes; ++n) {
      const std::string host = absl::StrFormat("H-n%05d-r%d", n, r);
      b.Add(host, DeviceKind::kHost, 0, absl::StrFormat("node%05d mlx5_%d", n, r));
      b.Cable(host, 1, leaf(n / s.hosts_per_leaf), n % s.hosts_per_leaf + 1, 0, s.gbps);
    }
    for (int l = 0; l < leaves; ++l) {
      const int p = l / s.leaves_per_pod, i = l % s.leaves_per_pod;
      for (int u = 0; u < s.hosts_per_leaf; ++u) {
        const int k = u / s.leaf_spine_links, link = u % s.leaf_spine_links;
        b.Cable(leaf(l), s.hosts_per_leaf + u + 1, spine(p, k), i * s.leaf_spine_links + link + 1, 1, s.gbps);
      }
    }
    for (int p = 0; s.cores_per_group > 0 && p < pods; ++p) {
      for (int k = 0; k < s.spines_per_pod; ++k) {
        for (int v = 0; v < spine_down; ++v) {
          const int c = v / s.spine_core_links, link = v % s.spine_core_links;
          b.Cable(spine(p, k), spine_down + v + 1, core(k, c), p * s.spine_core_links + link + 1, 2, s.gbps);
        }
      }
    }
  }
  return f;
}

}  // namespace gdrbench::controller::topology
