#include "controller/analysis/incast.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace gdrbench::controller::analysis {
namespace {

// The verdict of (src, dst) in the matrix of `rail` at `size`; "" if none.
class CellVerdicts {
 public:
  explicit CellVerdicts(const v1::Run& run) {
    for (const auto& m : run.matrices()) {
      if (m.has_dst_rail() && m.dst_rail() != m.rail()) continue;
      for (const auto& c : m.cells()) {
        if (c.src() >= static_cast<uint32_t>(m.nodes_size()) || c.dst() >= static_cast<uint32_t>(m.nodes_size())) {
          continue;
        }
        verdicts_[{m.rail(), m.size_bytes(), m.nodes(static_cast<int>(c.src())), m.nodes(static_cast<int>(c.dst()))}] =
            c.verdict();
      }
    }
  }
  std::string Get(uint32_t rail, uint64_t size, const std::string& src, const std::string& dst) const {
    auto it = verdicts_.find({rail, size, src, dst});
    return it == verdicts_.end() ? "" : it->second;
  }

 private:
  std::map<std::tuple<uint32_t, uint64_t, std::string, std::string>, std::string> verdicts_;
};

const v1::SizeResult* SizeOf(const v1::PairResult& p, uint64_t size) {
  for (const auto& s : p.sizes()) {
    if (s.size_bytes() == size) return &s;
  }
  return nullptr;
}

}  // namespace

std::vector<v1::IncastTarget> IncastTargets(const v1::Run& run) {
  // (rail, round, target) -> the group's pairs. Pairs are recorded as their tests finish, so the
  // senders are put in node order: the same run reads the same however its tests interleaved.
  std::map<std::tuple<uint32_t, uint32_t, std::string>, std::vector<const v1::PairResult*>> groups;
  for (const auto& p : run.pairs()) groups[{p.rail(), p.round(), p.dst().node()}].push_back(&p);
  for (auto& [key, pairs] : groups) {
    std::stable_sort(pairs.begin(), pairs.end(), [](const v1::PairResult* a, const v1::PairResult* b) {
      return std::tie(a->src().node(), a->src().nic_device()) <
             std::tie(b->src().node(), b->src().nic_device());
    });
  }
  const CellVerdicts verdicts(run);
  const double min_fraction = run.policy().min_fraction_of_link();
  std::vector<v1::IncastTarget> out;
  out.reserve(groups.size());
  for (const auto& [key, pairs] : groups) {
    const auto& [rail, round, target] = key;
    uint64_t size = 0, asked = 0;
    for (const auto* p : pairs) {
      for (const auto& s : p->sizes()) {
        asked = std::max(asked, s.size_bytes());
        if (p->status() == v1::RESULT_STATUS_OK && s.status() == v1::RESULT_STATUS_OK) {
          size = std::max(size, s.size_bytes());
        }
      }
    }
    if (size == 0) size = asked;
    if (size == 0 && !run.params().sizes_bytes().empty()) {  // no sender measured anything
      size = *std::max_element(run.params().sizes_bytes().begin(), run.params().sizes_bytes().end());
    }
    v1::IncastTarget t;
    t.set_node(target);
    t.set_rail(rail);
    t.set_round(round);
    t.set_size_bytes(size);
    t.set_fan_in(static_cast<uint32_t>(pairs.size()));
    double sum = 0, expected = 0;
    bool rate_known = true, any_ok = false;
    for (const auto* p : pairs) {
      v1::IncastSender* s = t.add_senders();
      s->set_node(p->src().node());
      const v1::SizeResult* z = SizeOf(*p, size);
      const bool ok = p->status() == v1::RESULT_STATUS_OK && z != nullptr && z->status() == v1::RESULT_STATUS_OK;
      s->set_status(ok ? v1::RESULT_STATUS_OK
                       : (p->status() != v1::RESULT_STATUS_OK ? p->status() : v1::RESULT_STATUS_FAILED));
      if (ok) {
        s->set_bw_avg_gbps(z->bw_avg_gbps());
        sum += z->bw_avg_gbps();
        any_ok = true;
      }
      s->set_verdict(verdicts.Get(rail, size, p->src().node(), target));
      rate_known &= p->expected_gbps() > 0;
      expected += p->expected_gbps();
    }
    t.set_aggregate_gbps(sum);
    if (rate_known) {
      t.set_expected_gbps(expected);
      t.set_fraction_of_link(sum / expected);
    }
    if (!any_ok) {
      t.set_verdict("fail");
    } else if (rate_known && min_fraction > 0) {
      t.set_verdict(sum >= min_fraction * expected ? "pass" : "low");
    }
    out.push_back(std::move(t));
  }
  return out;
}

void FillIncast(v1::Run* run) {
  auto targets = IncastTargets(*run);
  run->clear_incast();
  for (auto& t : targets) *run->add_incast() = std::move(t);
}

}  // namespace gdrbench::controller::analysis
