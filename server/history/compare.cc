#include "server/history/compare.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/history/regressions.h"

namespace gdrbench::server::history {

double ChangeFraction(double a, double b) { return a > 0 ? b / a - 1 : 0; }

namespace {

// One comparison of two runs, matrix by matrix: the counts in `out`, and
// the changed cells (at most a few pages past the one asked for kept).
class Comparison {
 public:
  Comparison(store::Store& store, const CompareSpec& spec, v1::CompareRunsResponse& out)
      : store_(store), spec_(spec), out_(out), keep_(spec.offset + spec.page_size) {}

  // The cells of one matrix (rail, size) in each run that holds it.
  absl::Status CompareMatrix(const store::RunRow& a, const store::RunRow& b, uint32_t rail, uint64_t size,
                             bool in_a, bool in_b) {
    // Run a's cells of this matrix, by (src, dst).
    std::vector<store::CellRecord> av;
    store::CellQuery q;
    q.rail = rail;
    q.size_bytes = size;
    if (in_a) {
      q.run = a.key;
      GDR_RETURN_IF_ERROR(store_.ReadCells(q, [&](const store::CellRecord& c) {
        if (Matches(c)) av.push_back(c);
        return absl::OkStatus();
      }));
    }
    std::vector<bool> matched(av.size(), false);
    if (in_b) {
      q.run = b.key;
      GDR_RETURN_IF_ERROR(store_.ReadCells(q, [&](const store::CellRecord& y) {
        if (!Matches(y)) return absl::OkStatus();
        auto it = std::lower_bound(av.begin(), av.end(), y, [](const store::CellRecord& l, const store::CellRecord& r) {
          return std::make_pair(l.src, l.dst) < std::make_pair(r.src, r.dst);
        });
        const store::CellRecord* x = nullptr;
        if (it != av.end() && it->src == y.src && it->dst == y.dst) {
          x = &*it;
          matched[it - av.begin()] = true;
        }
        if (Count(x, y)) Keep(Diff(x, &y, rail, size));
        return absl::OkStatus();
      }));
    }
    for (size_t i = 0; i < av.size(); ++i) {
      if (!matched[i]) out_.set_only_a(out_.only_a() + 1);
    }
    return absl::OkStatus();
  }

  // The page asked for, worst change first, and the next page's token.
  void Page() {
    std::sort(changed_.begin(), changed_.end(), [](const v1::CellDiff& x, const v1::CellDiff& y) {
      if (x.change_fraction() != y.change_fraction()) return x.change_fraction() < y.change_fraction();
      return std::make_tuple(x.rail(), x.size_bytes(), x.src(), x.dst()) <
             std::make_tuple(y.rail(), y.size_bytes(), y.src(), y.dst());
    });
    for (size_t i = spec_.offset; i < changed_.size() && i < keep_; ++i) *out_.add_changed() = changed_[i];
    if (keep_ < total_changed_) out_.set_next_page_token(absl::StrCat("o", keep_));
  }

 private:
  bool Matches(const store::CellRecord& c) const {
    return spec_.node < 0 || c.src == spec_.node || c.dst == spec_.node;
  }

  // Counts run b's cell `y` against run a's `x` (null: only in b); true
  // when the cell changed.
  bool Count(const store::CellRecord* x, const store::CellRecord& y) {
    if (!x) {
      out_.set_only_b(out_.only_b() + 1);
    } else if ((x->status == v1::RESULT_STATUS_OK) != (y.status == v1::RESULT_STATUS_OK)) {
      out_.set_status_changed(out_.status_changed() + 1);
      return true;
    } else if (x->status == v1::RESULT_STATUS_OK) {
      out_.set_compared(out_.compared() + 1);
      if (Dropped(x->bw_avg_gbps, y.bw_avg_gbps, spec_.tolerance)) {
        out_.set_dropped(out_.dropped() + 1);
        return true;
      }
      if (Dropped(y.bw_avg_gbps, x->bw_avg_gbps, spec_.tolerance)) {
        out_.set_improved(out_.improved() + 1);
        return true;
      }
    }
    return false;
  }

  v1::CellDiff Diff(const store::CellRecord* x, const store::CellRecord* y, uint32_t rail, uint64_t size) {
    v1::CellDiff d;
    const store::CellRecord& any = x ? *x : *y;
    d.set_rail(rail);
    d.set_size_bytes(size);
    d.set_src(store_.NodeName(any.src));
    d.set_dst(store_.NodeName(any.dst));
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
  }

  // A changed cell, counted; the list trimmed to the worst `keep_` when it
  // grows well past them.
  void Keep(v1::CellDiff d) {
    ++total_changed_;
    changed_.push_back(std::move(d));
    auto worse = [](const v1::CellDiff& x, const v1::CellDiff& y) {
      return x.change_fraction() < y.change_fraction();
    };
    if (changed_.size() > 2 * keep_ + 1024) {
      std::nth_element(changed_.begin(), changed_.begin() + keep_, changed_.end(), worse);
      changed_.resize(keep_);
    }
  }

  store::Store& store_;
  const CompareSpec& spec_;
  v1::CompareRunsResponse& out_;
  const size_t keep_;
  std::vector<v1::CellDiff> changed_;
  uint64_t total_changed_ = 0;
};

}  // namespace

absl::StatusOr<v1::CompareRunsResponse> CompareRuns(store::Store& store, const store::RunRow& a,
                                                    const store::RunRow& b, const CompareSpec& spec) {
  v1::CompareRunsResponse out;
  out.set_a(a.run_id);
  out.set_b(b.run_id);
  out.set_tolerance(spec.tolerance);
  GDR_ASSIGN_OR_RETURN(v1::Run ha, store.ReadHeader(a.key));
  GDR_ASSIGN_OR_RETURN(v1::Run hb, store.ReadHeader(b.key));
  std::set<std::pair<uint32_t, uint64_t>> in_a, in_b;
  for (const auto& m : ha.matrices()) in_a.insert({m.rail(), m.size_bytes()});
  for (const auto& m : hb.matrices()) in_b.insert({m.rail(), m.size_bytes()});
  std::set<std::pair<uint32_t, uint64_t>> all = in_a;
  all.insert(in_b.begin(), in_b.end());
  Comparison cmp(store, spec, out);
  for (const auto& [rail, size] : all) {
    if (spec.rail && *spec.rail != rail) continue;
    if (spec.size_bytes && spec.size_bytes != size) continue;
    GDR_RETURN_IF_ERROR(
        cmp.CompareMatrix(a, b, rail, size, in_a.count({rail, size}) > 0, in_b.count({rail, size}) > 0));
  }
  cmp.Page();
  return out;
}

}  // namespace gdrbench::server::history
