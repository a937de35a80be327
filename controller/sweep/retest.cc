#include "controller/sweep/retest.h"

#include <unordered_set>

namespace gdrbench::controller::sweep {
namespace {

uint64_t Key(uint32_t src, uint32_t dst, uint32_t rail) {
  return (uint64_t{src} << 40) ^ (uint64_t{dst} << 16) ^ rail;
}

}  // namespace

std::vector<schedule::Test> RetestTests(const analysis::MatrixSet& matrices, const run::Plan& plan) {
  const bool bidi = plan.schedule_options.bidirectional;
  std::vector<schedule::Test> tests;
  std::unordered_set<uint64_t> seen;
  std::unordered_set<uint64_t> scheduled;  // bidirectional: which way each test ran
  for (const analysis::Matrix* m : matrices.VerdictMatrices()) {
    for (uint32_t i = 0; i < m->n; ++i) {
      for (uint32_t j = 0; j < m->n; ++j) {
        if (m->at(i, j).verdict != analysis::Verdict::kLow) continue;
        uint32_t a = i, b = j;
        if (bidi) {
          if (scheduled.empty()) {
            for (const auto& t : plan.schedule.AllTests()) scheduled.insert(Key(t.src, t.dst, t.rail));
          }
          if (!scheduled.count(Key(i, j, m->rail)) && scheduled.count(Key(j, i, m->rail))) {
            std::swap(a, b);
          }
        }
        if (seen.insert(Key(a, b, m->rail)).second) tests.push_back({a, b, m->rail, bidi});
      }
    }
  }
  return tests;
}

absl::StatusOr<schedule::Schedule> RetestSchedule(const analysis::MatrixSet& matrices,
                                                  const run::Plan& plan) {
  std::vector<schedule::Test> tests = RetestTests(matrices, plan);
  return schedule::PackRounds(tests, run::Shapes(plan.nodes, plan.memory),
                              plan.schedule_options.max_concurrent);
}

}  // namespace gdrbench::controller::sweep
