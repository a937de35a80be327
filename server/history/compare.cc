#include "server/history/compare.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/history/regressions.h"

namespace gdrbench::server::history {

double ChangeFraction(double a, double b) { return a > 0 ? b / a - 1 : 0; }

absl::StatusOr<v1::CompareRunsResponse> CompareRuns(store::Store& store, const store::RunRow& a,
                                                    const store::RunRow& b, const CompareSpec& spec) {
  v1::CompareRunsResponse out;
  out.set_a(a.run_id);
  out.set_b(b.run_id);
  out.set_tolerance(spec.tolerance);
  ASSIGN_OR_RETURN(v1::Run ha, store.ReadHeader(a.key));
  ASSIGN_OR_RETURN(v1::Run hb, store.ReadHeader(b.key));
  std::set<std::pair<uint32_t, uint64_t>> in_a, in_b;
  for (const auto& m : ha.matrices()) in_a.insert({m.rail(), m.size_bytes()});
  for (const auto& m : hb.matrices()) in_b.insert({m.rail(), m.size_bytes()});
  const size_t keep = spec.offset + spec.page_size;
  std::vector<v1::CellDiff> changed;
  auto trim = [&] {
    auto worse = [](const v1::CellDiff& x, const v1::CellDiff& y) {
      return x.change_fraction() < y.change_fraction();
    };
    if (changed.size() > 2 * keep + 1024) {
      std::nth_element(changed.begin(), changed.begin() + keep, changed.end(), worse);
      changed.resize(keep);
    }
  };
  uint64_t total_changed = 0;
  auto matches = [&](const store::CellRecord& c) {
    return spec.node < 0 || c.src == spec.node || c.dst == spec.node;
  };
  std::set<std::pair<uint32_t, uint64_t>> all = in_a;
  all.insert(in_b.begin(), in_b.end());
  for (const auto& matrix : all) {
    // Named copies, not a structured binding: the lambdas below use them,
    // which clang before 16 (the fuzzers' clang-14) refuses for bindings.
    const uint32_t rail = matrix.first;
    const uint64_t size = matrix.second;
    if (spec.rail && *spec.rail != rail) continue;
    if (spec.size_bytes && spec.size_bytes != size) continue;
    // Run a's cells of this matrix, by (src, dst).
    std::vector<store::CellRecord> av;
    std::vector<bool> matched;
    store::CellQuery q;
    q.rail = rail;
    q.size_bytes = size;
    if (in_a.count({rail, size})) {
      q.run = a.key;
      RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& c) {
        if (matches(c)) av.push_back(c);
        return absl::OkStatus();
      }));
    }
    matched.assign(av.size(), false);
    auto diff = [&](const store::CellRecord* x, const store::CellRecord* y) {
      v1::CellDiff d;
      const store::CellRecord& any = x ? *x : *y;
      d.set_rail(rail);
      d.set_size_bytes(size);
      d.set_src(store.NodeName(any.src));
      d.set_dst(store.NodeName(any.dst));
      if (x) {
        d.set_a_status(static_cast<v1::ResultStatus>(x->status));
        d.set_a_gbps(x->bw_avg_gbps);
      }
      if (y) {
        d.set_b_status(static_cast<v1::ResultStatus>(y->status));
        d.set_b_gbps(y->bw_avg_gbps);
      }
      if (x && y && x->status == v1::RESULT_STATUS_OK && y->status == v1::RESULT_STATUS_OK) {
        d.set_change_fraction(ChangeFraction(x->bw_avg_gbps, y->bw_avg_gbps));
      } else if (x && x->status == v1::RESULT_STATUS_OK) {
        d.set_change_fraction(-1);  // was OK, now failed or gone: the largest drop
      }
      return d;
    };
    if (in_b.count({rail, size})) {
      q.run = b.key;
      RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& y) {
        if (!matches(y)) return absl::OkStatus();
        auto it = std::lower_bound(av.begin(), av.end(), y, [](const store::CellRecord& l, const store::CellRecord& r) {
          return std::make_pair(l.src, l.dst) < std::make_pair(r.src, r.dst);
        });
        const store::CellRecord* x = nullptr;
        if (it != av.end() && it->src == y.src && it->dst == y.dst) {
          x = &*it;
          matched[it - av.begin()] = true;
        }
        bool is_changed = false;
        if (!x) {
          out.set_only_b(out.only_b() + 1);
        } else if ((x->status == v1::RESULT_STATUS_OK) != (y.status == v1::RESULT_STATUS_OK)) {
          out.set_status_changed(out.status_changed() + 1);
          is_changed = true;
        } else if (x->status == v1::RESULT_STATUS_OK) {
          out.set_compared(out.compared() + 1);
          if (Dropped(x->bw_avg_gbps, y.bw_avg_gbps, spec.tolerance)) {
            out.set_dropped(out.dropped() + 1);
            is_changed = true;
          } else if (Dropped(y.bw_avg_gbps, x->bw_avg_gbps, spec.tolerance)) {
            out.set_improved(out.improved() + 1);
            is_changed = true;
          }
        }
        if (is_changed) {
          ++total_changed;
          changed.push_back(diff(x, &y));
          trim();
        }
        return absl::OkStatus();
      }));
    }
    for (size_t i = 0; i < av.size(); ++i) {
      if (!matched[i]) out.set_only_a(out.only_a() + 1);
    }
  }
  std::sort(changed.begin(), changed.end(), [](const v1::CellDiff& x, const v1::CellDiff& y) {
    if (x.change_fraction() != y.change_fraction()) return x.change_fraction() < y.change_fraction();
    return std::make_tuple(x.rail(), x.size_bytes(), x.src(), x.dst()) <
           std::make_tuple(y.rail(), y.size_bytes(), y.src(), y.dst());
  });
  for (size_t i = spec.offset; i < changed.size() && i < keep; ++i) *out.add_changed() = changed[i];
  if (keep < total_changed) out.set_next_page_token(absl::StrCat("o", keep));
  return out;
}

}  // namespace gdrbench::server::history
