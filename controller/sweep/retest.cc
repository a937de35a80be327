#include "controller/sweep/retest.h"

#include <set>
#include <tuple>
#include <unordered_set>

namespace gdrbench::controller::sweep {
namespace {

uint64_t Key(uint32_t src, uint32_t dst, uint32_t rail) {
  return (uint64_t{src} << 40) ^ (uint64_t{dst} << 16) ^ rail;
}

// A test's identity with both ends' rails (cross-rail: one (src, dst, rail)
// is tested once per target rail).
using LaneTest = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;

// The rounds' groups (target, rail) that hold one of `tests`, each group as
// one round in the plan's order.
schedule::Schedule IncastGroups(const std::vector<schedule::Test>& tests, const schedule::Schedule& plan) {
  std::unordered_set<uint64_t> low;
  for (const auto& t : tests) low.insert(Key(t.src, t.dst, t.rail));
  schedule::Schedule out;
  for (size_t r = 0; r < plan.rounds(); ++r) {
    const auto round = plan.Round(r);
    std::unordered_set<uint64_t> groups;  // (dst, rail) of this round with a low cell
    for (const auto& t : round) {
      if (low.count(Key(t.src, t.dst, t.rail))) groups.insert(Key(0, t.dst, t.rail));
    }
    for (const auto& t : round) {  // groups in the order their first test ran
      const uint64_t g = Key(0, t.dst, t.rail);
      if (!groups.erase(g)) continue;
      for (const auto& u : round) {
        if (u.dst == t.dst && u.rail == t.rail) out.Add(u);
      }
      out.CloseRound();
    }
  }
  out.CloseRound();
  return out;
}

}  // namespace

std::vector<schedule::Test> RetestTests(const analysis::MatrixSet& matrices, const run::Plan& plan,
                                        const std::vector<CellRef>& extra) {
  const bool bidi = plan.schedule_options.bidirectional;
  // The cells to retest: the low ones, then `extra`.
  std::vector<CellRef> cells;
  for (const analysis::Matrix* m : matrices.VerdictMatrices()) {
    for (uint32_t i = 0; i < m->n; ++i) {
      for (uint32_t j = 0; j < m->n; ++j) {
        if (m->at(i, j).verdict == analysis::Verdict::kLow) cells.push_back({m, i, j});
      }
    }
  }
  cells.insert(cells.end(), extra.begin(), extra.end());
  // Bidirectional: which way each of these cells' tests ran, from one walk
  // over the schedule (round by round: all-pairs is never made whole) that
  // keeps only these cells' tests.
  std::unordered_set<uint64_t> scheduled;
  if (bidi && !cells.empty()) {
    std::unordered_set<uint64_t> wanted;
    for (const CellRef& c : cells) {
      wanted.insert(Key(c.src, c.dst, c.m->rail));
      wanted.insert(Key(c.dst, c.src, c.m->rail));
    }
    plan.schedule.ForEachTest([&](const schedule::Test& t) {
      if (const uint64_t k = Key(t.src, t.dst, t.rail); wanted.count(k)) scheduled.insert(k);
    });
  }
  std::vector<schedule::Test> tests;
  std::set<LaneTest> seen;
  for (const CellRef& c : cells) {
    const analysis::Matrix& m = *c.m;
    uint32_t a = c.src, b = c.dst;
    if (bidi && !scheduled.count(Key(a, b, m.rail)) && scheduled.count(Key(b, a, m.rail))) std::swap(a, b);
    // A cross-rail cell re-runs its own lane; every other cell its rail.
    const uint32_t dst_rail = m.cross_rail() ? m.target_rail() : schedule::Test::kSameRail;
    if (seen.insert({a, b, m.rail, m.target_rail()}).second) tests.push_back({a, b, m.rail, bidi, dst_rail});
  }
  return tests;
}

void MarkRetested(analysis::MatrixSet& matrices, const std::vector<CellRef>& regressed) {
  for (analysis::Matrix* m : matrices.VerdictMatrices()) {
    for (uint32_t k = 0; k < m->cells.size(); ++k) {
      if (m->cells[k].verdict == analysis::Verdict::kLow) m->retested.insert(k);
    }
    for (const CellRef& c : regressed) {
      if (c.m == m) m->retested.insert(c.src * m->n + c.dst);
    }
  }
}

absl::StatusOr<schedule::Schedule> RetestSchedule(const analysis::MatrixSet& matrices, const run::Plan& plan,
                                                  const std::vector<CellRef>& extra) {
  std::vector<schedule::Test> tests = RetestTests(matrices, plan, extra);
  if (plan.schedule_options.mode == schedule::Mode::kIncast) return IncastGroups(tests, plan.schedule);
  return schedule::PackRounds(tests, run::Shapes(plan.nodes, plan.memory),
                              plan.schedule_options.max_concurrent);
}

}  // namespace gdrbench::controller::sweep
