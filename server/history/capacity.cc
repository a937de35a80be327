#include "server/history/capacity.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::history {
namespace {

enum : size_t { kAll = 0, kIntra = 1, kCross = 2, kCrossSpine = 3, kFirstLeaf = 4 };

}  // namespace

uint32_t HistBin(double gbps) {
  if (!(gbps > kHistBase)) return 0;
  const double b = std::floor(std::log(gbps / kHistBase) / std::log(kHistStep));
  return static_cast<uint32_t>(std::min<double>(b, kHistBins - 1));
}

double HistBinLow(uint32_t bin) { return kHistBase * std::pow(kHistStep, bin); }

double HistQuantile(const std::vector<uint32_t>& bins, const std::vector<uint64_t>& counts, double q,
                    double min, double max) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  // The rank of the quantile (nearest rank, 1-based).
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(total))));
  uint64_t seen = 0;
  for (size_t i = 0; i < bins.size() && i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) {
      const double mid = HistBinLow(bins[i]) * std::sqrt(kHistStep);
      return std::clamp(mid, min, max);
    }
  }
  return max;
}

RailLabels LabelsOf(const v1::Run& run, uint32_t rail, const std::vector<std::string>& nodes) {
  RailLabels out;
  out.leaf.assign(nodes.size(), "");
  out.spine_group.assign(nodes.size(), "");
  if (run.topology().empty()) return out;
  std::map<std::string, const v1::RailTopology*> by_node;
  for (const auto& t : run.topology()) {
    for (const auto& r : t.rails()) {
      if (r.rail() == rail) by_node[t.node()] = &r;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = by_node.find(nodes[i]);
    if (it == by_node.end()) continue;
    out.leaf[i] = it->second->leaf();
    out.spine_group[i] = it->second->spine_group();
    out.any = out.any || !out.leaf[i].empty();
  }
  return out;
}

CapacityBuilder::CapacityBuilder(uint32_t rail, uint64_t size_bytes, std::vector<std::string> nodes,
                                 RailLabels labels, size_t keep_weakest)
    : rail_(rail), size_bytes_(size_bytes), nodes_(std::move(nodes)), labels_(std::move(labels)),
      keep_(keep_weakest) {
  auto intern = [](const std::vector<std::string>& names, std::vector<int>* ids, std::vector<std::string>* table) {
    std::map<std::string, int> index;
    ids->assign(names.size(), -1);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty()) continue;
      auto [it, added] = index.emplace(names[i], static_cast<int>(table->size()));
      if (added) table->push_back(names[i]);
      (*ids)[i] = it->second;
    }
  };
  labels_.leaf.resize(nodes_.size());
  labels_.spine_group.resize(nodes_.size());
  intern(labels_.leaf, &leaf_id_, &leaf_names_);
  intern(labels_.spine_group, &spine_id_, &spine_names_);
  groups_.resize(kFirstLeaf + 2 * leaf_names_.size() + spine_names_.size());
}

CapacityBuilder::Acc& CapacityBuilder::Group(size_t index, const std::string& name) {
  Acc& a = groups_[index];
  if (a.name.empty()) a.name = name;
  return a;
}

void CapacityBuilder::Count(Acc& a, bool ok, double gbps, double link) {
  a.link = std::max(a.link, link);
  if (!ok) {
    ++a.failed;
    return;
  }
  if (a.ok == 0) {
    a.min = a.max = gbps;
    a.hist.assign(kHistBins, 0);
  }
  ++a.ok;
  a.min = std::min(a.min, gbps);
  a.max = std::max(a.max, gbps);
  a.sum += gbps;
  ++a.hist[HistBin(gbps)];
}

void CapacityBuilder::Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps, double link) {
  if (src >= nodes_.size() || dst >= nodes_.size() || status == v1::RESULT_STATUS_SKIPPED ||
      status == v1::RESULT_STATUS_UNSPECIFIED) {
    return;
  }
  const bool ok = status == v1::RESULT_STATUS_OK;
  Count(Group(kAll, "all"), ok, gbps, link);
  const int ls = leaf_id_[src], ld = leaf_id_[dst];
  if (ls >= 0 && ld >= 0) {
    if (ls == ld) {
      Count(Group(kIntra, "intra-leaf"), ok, gbps, link);
      Count(Group(kFirstLeaf + 2 * ls, absl::StrCat("leaf ", leaf_names_[ls])), ok, gbps, link);
    } else {
      Count(Group(kCross, "cross-leaf"), ok, gbps, link);
      Count(Group(kFirstLeaf + 2 * ls + 1, absl::StrCat("leaf ", leaf_names_[ls], " uplinks")), ok, gbps, link);
      const int gs = spine_id_[src], gd = spine_id_[dst];
      if (gs >= 0 && gd >= 0) {
        if (gs == gd) {
          Count(Group(kFirstLeaf + 2 * leaf_names_.size() + gs, absl::StrCat("spine group ", spine_names_[gs])),
                ok, gbps, link);
        } else {
          Count(Group(kCrossSpine, "cross-spine-group"), ok, gbps, link);
        }
      }
    }
  }
  if (!ok || keep_ == 0) return;
  Weak w{link > 0 ? gbps / link : gbps, src, dst, static_cast<float>(gbps), static_cast<float>(link)};
  if (weakest_.size() < keep_) {
    weakest_.push(w);
  } else if (w.key < weakest_.top().key) {
    weakest_.pop();
    weakest_.push(w);
  }
}

void CapacityBuilder::Finish(v1::RunCapacity* out) {
  for (const Acc& a : groups_) {
    if (a.ok + a.failed == 0) continue;
    v1::CapacityStats* s = out->add_groups();
    s->set_rail(rail_);
    s->set_group(a.name);
    s->set_size_bytes(size_bytes_);
    s->set_ok_cells(a.ok);
    s->set_failed_cells(a.failed);
    s->set_min_gbps(a.min);
    s->set_max_gbps(a.max);
    s->set_sum_gbps(a.sum);
    s->set_link_gbps(a.link);
    for (uint32_t b = 0; b < a.hist.size(); ++b) {
      if (a.hist[b] == 0) continue;
      s->add_bins(b);
      s->add_counts(a.hist[b]);
    }
  }
  std::vector<Weak> weak;
  while (!weakest_.empty()) {
    weak.push_back(weakest_.top());
    weakest_.pop();
  }
  std::reverse(weak.begin(), weak.end());  // weakest first
  for (const Weak& w : weak) {
    v1::CapacityCell* c = out->add_weakest();
    c->set_rail(rail_);
    c->set_src(nodes_[w.src]);
    c->set_dst(nodes_[w.dst]);
    c->set_gbps(w.gbps);
    c->set_link_gbps(w.link);
    c->set_src_leaf(labels_.leaf[w.src]);
    c->set_dst_leaf(labels_.leaf[w.dst]);
  }
}

}  // namespace gdrbench::server::history
