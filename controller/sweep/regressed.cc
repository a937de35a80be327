#include "controller/sweep/regressed.h"

#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::sweep {
namespace {

using Link = std::pair<uint32_t, uint32_t>;

// Measured, and read neither low nor failed.
bool Fine(const analysis::Cell& c) {
  return c.status == v1::RESULT_STATUS_OK && c.verdict != analysis::Verdict::kLow &&
         c.verdict != analysis::Verdict::kFail;
}

// The links of `m` that regressed against `refs`, as matrix indices.
std::set<Link> RegressedLinks(const analysis::Matrix& m,
                              const std::unordered_map<std::string, uint32_t>& index,
                              const v1::LinkReferences& refs) {
  std::set<Link> out;
  for (const v1::LinkReference& l : refs.links()) {
    auto s = index.find(l.src()), d = index.find(l.dst());
    if (s == index.end() || d == index.end() || s->second >= m.n || d->second >= m.n) continue;
    const analysis::Cell& c = m.at(s->second, d->second);
    if (!Fine(c)) continue;
    if (Regressed(l.baseline_gbps(), l.baseline_threshold(), c.gbps) ||
        Regressed(l.history_gbps(), l.history_threshold(), c.gbps)) {
      out.insert({s->second, d->second});
    }
  }
  return out;
}

// The first node after `from` (wrapping) whose cell with `end` (end -> x when
// `outgoing`, x -> end otherwise) passed and did not regress; -1 when none.
int Partner(const analysis::Matrix& m, uint32_t end, uint32_t other, bool outgoing,
            const std::set<Link>& bad) {
  for (uint32_t k = 1; k < m.n; ++k) {
    const uint32_t x = (end + k) % m.n;
    if (x == other) continue;
    const Link l = outgoing ? Link{end, x} : Link{x, end};
    if (Fine(m.at(l.first, l.second)) && !bad.count(l)) return static_cast<int>(x);
  }
  return -1;
}

}  // namespace

bool Regressed(double reference, double threshold, double gbps) {
  return reference > 0 && gbps < (1 - threshold) * reference;
}

RegressedCells FindRegressed(const std::vector<const analysis::Matrix*>& verdict_matrices,
                             const std::vector<std::string>& nodes, const ReferenceMap& references) {
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i], i);
  RegressedCells out;
  for (const analysis::Matrix* m : verdict_matrices) {
    if (m->cross_rail()) continue;
    auto it = references.find({m->rail, m->size_bytes});
    if (it == references.end()) continue;
    const std::set<Link> bad = RegressedLinks(*m, index, it->second);
    std::set<Link> partners;
    for (const auto& [a, b] : bad) {
      out.regressed.push_back({m, a, b});
      if (int c = Partner(*m, a, b, true, bad); c >= 0) partners.insert({a, static_cast<uint32_t>(c)});
      if (int d = Partner(*m, b, a, false, bad); d >= 0) partners.insert({static_cast<uint32_t>(d), b});
    }
    for (const auto& [s, d] : partners) out.partners.push_back({m, s, d});
  }
  return out;
}

RegressedCells FetchAndFind(const LinkReferencesFn& fetch, const analysis::MatrixSet& matrices,
                            const std::function<void(const std::string&)>& note) {
  ReferenceMap refs;
  for (const analysis::Matrix* m : matrices.VerdictMatrices()) {
    if (m->cross_rail()) continue;
    absl::StatusOr<v1::LinkReferences> r = fetch(m->rail, m->size_bytes);
    const std::string where = absl::StrCat("regressions: rail ", m->rail, " size ", m->size_bytes, " B: ");
    if (!r.ok()) {
      note(absl::StrCat(where, "cannot read the server's references (", r.status().message(),
                        "): its regressed cells are not retested"));
      continue;
    }
    note(absl::StrCat(where, r->summary()));
    refs[{m->rail, m->size_bytes}] = *std::move(r);
  }
  RegressedCells out = FindRegressed(matrices.VerdictMatrices(), matrices.nodes(), refs);
  if (!refs.empty()) {
    note(absl::StrCat("regressions: ", out.regressed.size(), " cell(s) regressed against them",
                      out.regressed.empty()
                          ? ""
                          : absl::StrCat(": retested with ", out.partners.size(),
                                         " partner test(s) that separate each link from its ends")));
  }
  return out;
}

}  // namespace gdrbench::controller::sweep
