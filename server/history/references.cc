#include "server/history/references.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "server/history/link_noise.h"
#include "server/history/names.h"

namespace gdrbench::server::history {
namespace {

using LinkKey = std::pair<int64_t, int64_t>;  // (src, dst) node ids

// The baseline run's OK readings of (rail, size), by link; its run id (empty
// when no baseline is set).
absl::StatusOr<std::string> BaselineReadings(store::Store& store, const std::string& cluster, uint32_t rail,
                                             uint64_t size_bytes, std::map<LinkKey, float>* out) {
  GDR_ASSIGN_OR_RETURN(auto bl, store.GetBaseline(cluster));
  if (!bl) return std::string();
  GDR_ASSIGN_OR_RETURN(auto row, store.FindRunByKey(bl->run_key));
  if (!row) return std::string();
  store::CellQuery q;
  q.run = row->key;
  q.rail = rail;
  q.size_bytes = size_bytes;
  GDR_RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& c) {
    if (c.status == v1::RESULT_STATUS_OK) (*out)[{c.src, c.dst}] = static_cast<float>(c.bw_avg_gbps);
    return absl::OkStatus();
  }));
  return row->run_id;
}

std::string Summary(const v1::LinkReferences& r, size_t baseline_links, size_t history_links) {
  const std::string runs = absl::StrCat(r.min_history(), " or more runs");
  if (baseline_links == 0 && history_links == 0) {
    return absl::StrCat(r.baseline_run_id().empty() ? "no baseline" : "a baseline without this size",
                        " and no link with ", runs, " of history: nothing to judge regressions by");
  }
  std::vector<std::string> parts;
  if (baseline_links > 0)
    parts.push_back(absl::StrCat("baseline run ", r.baseline_run_id(), " (", baseline_links, " links)"));
  if (history_links > 0) parts.push_back(absl::StrCat("history (", history_links, " links with ", runs, ")"));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<v1::LinkReferences> FindLinkReferences(store::Store& store,
                                                      const v1::GetLinkReferencesRequest& req,
                                                      const IngestOptions& options) {
  const std::string cluster = req.cluster().empty() ? "default" : req.cluster();
  GDR_RETURN_IF_ERROR(CheckClusterName(cluster, "cluster", true));
  v1::LinkReferences out;
  out.set_cluster(cluster);
  out.set_rail(req.rail());
  out.set_size_bytes(req.size_bytes());
  out.set_tolerance(options.tolerance);
  out.set_noise_k(options.noise.k);
  out.set_min_history(options.noise.min_history);
  std::map<LinkKey, float> baseline;
  GDR_ASSIGN_OR_RETURN(std::string baseline_run,
                       BaselineReadings(store, cluster, req.rail(), req.size_bytes(), &baseline));
  out.set_baseline_run_id(baseline_run);
  LinkNoiseTable noise(options.noise.window);
  GDR_ASSIGN_OR_RETURN(auto kept, store.ReadLinkNoise(cluster, req.rail(), req.size_bytes()));
  if (kept) {
    auto t = LinkNoiseTable::Decode(kept->data, options.noise.window);
    if (!t.ok()) {
      return absl::DataLossError(absl::StrCat("link noise of cluster ", cluster, " rail ", req.rail(),
                                              " size ", req.size_bytes(), " B: ", t.status().message()));
    }
    noise = std::move(*t);
  }
  // Every link either reference knows, in (src, dst) id order.
  std::map<LinkKey, std::pair<float, LinkSummary>> links;
  for (const auto& [k, gbps] : baseline) links[k].first = gbps;
  for (const LinkKey& k : noise.Keys()) {
    LinkSummary s = noise.Find(k);
    if (s.history >= options.noise.min_history) links[k].second = s;
  }
  std::map<int64_t, std::string> names;
  auto name = [&](int64_t id) -> const std::string& {
    auto it = names.find(id);
    if (it == names.end()) it = names.emplace(id, store.NodeName(id)).first;
    return it->second;
  };
  size_t baseline_links = 0, history_links = 0;
  for (const auto& [k, ref] : links) {
    const auto& [base, hist] = ref;
    // Without min_history readings the link's noise does not set a threshold (as at ingest).
    LinkSummary known = noise.Find(k);
    v1::LinkReference* l = out.add_links();
    l->set_src(name(k.first));
    l->set_dst(name(k.second));
    l->set_history_runs(known.history);
    if (base > 0) {
      l->set_baseline_gbps(base);
      l->set_baseline_threshold(
          Threshold(LinkSummary{known.history, 0, known.noise}, options.tolerance, options.noise));
      ++baseline_links;
    }
    if (hist.history > 0) {
      l->set_history_gbps(hist.median);
      l->set_history_threshold(Threshold(hist, options.tolerance, options.noise));
      ++history_links;
    }
  }
  out.set_summary(Summary(out, baseline_links, history_links));
  return out;
}

}  // namespace gdrbench::server::history
