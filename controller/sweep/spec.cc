#include "controller/sweep/spec.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "common/sweep_limits.h"
#include "controller/analysis/verdicts.h"

namespace gdrbench::controller::sweep {
namespace {

namespace limits = sweep_limits;

absl::Status Bad(auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); }

// The deprecated fields are read here and nowhere else (their accessors are
// marked deprecated by protoc).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

std::vector<std::string> LegacyParamFields(const v1::SweepSpec& s) {
  std::vector<std::string> set;
  if (!s.sizes().empty()) set.push_back("sizes");
  if (s.iterations() != 0) set.push_back("iterations");
  if (s.duration_s() != 0) set.push_back("duration_s");
  if (s.qps() != 0) set.push_back("qps");
  if (s.bidirectional()) set.push_back("bidirectional");
  if (s.verify()) set.push_back("verify");
  if (!s.cm().empty()) set.push_back("cm");
  return set;
}

// The request of the previous version: `gdrbench sweep`'s defaults for what
// it leaves out.
absl::StatusOr<v1::SweepParams> LegacyParams(const v1::SweepSpec& s) {
  const FieldNames& n = kLegacySpecFields;
  v1::SweepParams p = SweepConfig::DefaultParams();
  if (!s.sizes().empty()) {
    GDR_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, ParseSizes(s.sizes()));
    p.clear_sizes_bytes();
    for (uint64_t size : sizes) p.add_sizes_bytes(size);
  }
  GDR_ASSIGN_OR_RETURN(int64_t duration_ns, DurationNs(s.duration_s(), n.duration));
  p.set_duration_ns(duration_ns);
  if (duration_ns > 0) {
    p.set_iterations(0);
    if (s.iterations() != 0) return Bad(n.iterations, " and ", n.duration, " exclude each other: give one");
  } else if (s.iterations() != 0) {
    p.set_iterations(s.iterations());
  }
  if (s.qps() != 0) p.set_qps(s.qps());
  p.set_bidirectional(s.bidirectional());
  p.set_verify(s.verify());
  if (!s.cm().empty()) {
    GDR_ASSIGN_OR_RETURN(v1::ConnectionMode cm, ParseConnectionMode(s.cm(), n.cm));
    p.set_cm(cm);
  }
  GDR_RETURN_IF_ERROR(ValidateParams(p, n));
  return p;
}

absl::StatusOr<schedule::Mode> ModeOf(const v1::SweepSpec& s, const FieldNames& n) {
  if (s.mode().empty()) return FromSweepMode(s.sweep_mode(), n.mode);
  if (s.sweep_mode() != v1::SWEEP_MODE_UNSPECIFIED) {
    return Bad("mode '", s.mode(), "' (deprecated) and ", n.mode, " both given: give ", n.mode, " only");
  }
  return schedule::ParseMode(s.mode());
}

// The deprecated `memory` is passed on as written (RunSweep checks it, as it
// checks an inventory's memory).
absl::StatusOr<std::string> MemoryOf(const v1::SweepSpec& s, const FieldNames& n) {
  if (!s.memory().empty()) {
    if (!s.memory_kinds().empty()) {
      return Bad("memory '", s.memory(), "' (deprecated) and ", n.memory, " both given: give ", n.memory, " only");
    }
    return s.memory();
  }
  std::vector<absl::string_view> names;
  std::set<int> seen;
  for (int kind : s.memory_kinds()) {
    absl::string_view name = MemoryKindName(static_cast<v1::MemoryKind>(kind));
    if (name.empty()) {
      return Bad(n.memory, " ", kind, ": give MEMORY_KIND_HOST, MEMORY_KIND_HUGEPAGE, MEMORY_KIND_GPU or "
                 "MEMORY_KIND_GPU_STAGED");
    }
    if (!seen.insert(kind).second) return Bad(n.memory, ": ", name, " is named twice; name each kind once");
    names.push_back(name);
  }
  return absl::StrJoin(names, ",");
}

absl::Status Fraction(double v, absl::string_view name) {
  if (v >= 0 && v <= 1) return absl::OkStatus();
  return Bad(name, " must be 0 to 1, got ", v);
}

absl::Status MadK(double v, absl::string_view name) {
  if (v >= 0 && v <= limits::kMaxMadK) return absl::OkStatus();
  return Bad(name, " must be 0 to ", limits::kMaxMadK, ", got ", v);
}

absl::StatusOr<v1::VerdictPolicy> LegacyPolicy(const v1::SweepSpec& s) {
  v1::VerdictPolicy p = SweepConfig::DefaultPolicy();
  if (s.has_min_link_fraction()) {
    GDR_RETURN_IF_ERROR(Fraction(s.min_link_fraction(), "min_link_fraction"));
    p.set_min_fraction_of_link(s.min_link_fraction());
  }
  if (s.has_fleet_min_drop()) {
    GDR_RETURN_IF_ERROR(Fraction(s.fleet_min_drop(), "fleet_min_drop"));
    p.set_fleet_min_drop(s.fleet_min_drop());
  }
  if (s.has_mad_k()) {
    GDR_RETURN_IF_ERROR(MadK(s.mad_k(), "mad_k"));
    p.set_mad_k(s.mad_k());
  }
  return p;
}

bool HasLegacyPolicy(const v1::SweepSpec& s) {
  return s.has_min_link_fraction() || s.has_mad_k() || s.has_fleet_min_drop();
}

#pragma GCC diagnostic pop

// A typed `params`: complete, as a run records it.
absl::StatusOr<v1::SweepParams> TypedParams(const v1::SweepParams& p, const FieldNames& n) {
  if (!p.memory().empty()) {
    return Bad("params.memory '", p.memory(), "': give ", n.memory, " (a sweep sets each test's memory)");
  }
  if (p.has_inline_size()) return Bad("params.inline_size is for write_lat; a sweep measures write_bw");
  if (p.iterations() == 0 && p.duration_ns() == 0) {
    return Bad(n.iterations, " 0 and ", n.duration, " 0: give one (params are complete when given)");
  }
  GDR_RETURN_IF_ERROR(ValidateParams(p, n));
  if (p.test() != v1::TEST_KIND_WRITE_BW) {
    return Bad(n.test, " ", v1::TestKind_Name(p.test()), ": a sweep measures write_bw (write_lat: gdrbench pair)");
  }
  return p;
}

absl::Status ApplyParams(const v1::SweepSpec& s, const FieldNames& n, SweepConfig* c) {
  std::vector<std::string> legacy = LegacyParamFields(s);
  if (s.has_params() && !legacy.empty()) {
    return Bad("params and the deprecated ", absl::StrJoin(legacy, ", "), " both given: give params only");
  }
  if (s.has_params()) {
    GDR_ASSIGN_OR_RETURN(c->params, TypedParams(s.params(), n));
  } else {
    GDR_ASSIGN_OR_RETURN(c->params, LegacyParams(s));
  }
  c->schedule.bidirectional = c->params.bidirectional();
  return absl::OkStatus();
}

absl::Status ApplyPolicy(const v1::SweepSpec& s, SweepConfig* c) {
  if (!s.has_policy()) {
    GDR_ASSIGN_OR_RETURN(c->policy, LegacyPolicy(s));
    return absl::OkStatus();
  }
  if (HasLegacyPolicy(s)) {
    return Bad("policy and the deprecated min_link_fraction, mad_k or fleet_min_drop both given: give policy only");
  }
  const v1::VerdictPolicy& p = s.policy();
  GDR_RETURN_IF_ERROR(Fraction(p.min_fraction_of_link(), "policy.min_fraction_of_link"));
  GDR_RETURN_IF_ERROR(Fraction(p.fleet_min_drop(), "policy.fleet_min_drop"));
  GDR_RETURN_IF_ERROR(Fraction(p.baseline_tolerance(), "policy.baseline_tolerance"));
  GDR_RETURN_IF_ERROR(Fraction(p.min_gpu_host_ratio(), "policy.min_gpu_host_ratio"));
  GDR_RETURN_IF_ERROR(Fraction(p.max_retransmit_fraction(), "policy.max_retransmit_fraction"));
  GDR_RETURN_IF_ERROR(MadK(p.mad_k(), "policy.mad_k"));
  if (!p.baseline_run().empty()) {
    return Bad("policy.baseline_run '", p.baseline_run(), "': leave it empty (the baseline is the caller's)");
  }
  c->policy = p;
  return absl::OkStatus();
}

absl::Status ApplySchedule(const v1::SweepSpec& s, const FieldNames& n, SweepConfig* c) {
  GDR_ASSIGN_OR_RETURN(c->schedule.mode, ModeOf(s, n));
  // Named as the request named it (neither field given: "mode").
  const absl::string_view mode_name = s.sweep_mode() != v1::SWEEP_MODE_UNSPECIFIED ? n.mode : kLegacySpecFields.mode;
  if (c->schedule.mode == schedule::Mode::kIncast) {
    if (!s.has_fan_in()) {
      return Bad(mode_name, " incast needs ", n.fan_in, " K (senders per target, 1 <= K < nodes)");
    }
    c->schedule.fan_in = s.fan_in();
  } else if (s.has_fan_in()) {
    return Bad(n.fan_in, " is only for ", mode_name, " incast, not ", schedule::ModeName(c->schedule.mode));
  }
  c->schedule.quick_matchings = s.quick_rounds() ? s.quick_rounds() : limits::kDefaultQuickRounds;
  if (c->schedule.quick_matchings > limits::kMaxQuickRounds) {
    return Bad(n.quick_rounds, " ", s.quick_rounds(), ": give 1 .. ", limits::kMaxQuickRounds);
  }
  c->schedule.max_concurrent = s.max_concurrent();
  return absl::OkStatus();
}

absl::Status ApplyRunning(const v1::SweepSpec& s, const FieldNames& n, SweepConfig* c) {
  if (s.has_retest_low()) {
    if (s.retest_low() > limits::kMaxRetestLow) {
      return Bad(n.retest_low, " must be at most ", limits::kMaxRetestLow, ", got ", s.retest_low());
    }
    c->retest_low = s.retest_low();
  }
  if (s.has_parallel()) {
    if (s.parallel() < 1 || s.parallel() > limits::kMaxParallel) {
      return Bad(n.parallel, " must be 1 to ", limits::kMaxParallel, ", got ", s.parallel());
    }
    c->parallel = s.parallel();
  }
  c->preflight = !s.no_preflight();
  c->force = s.force();
  return absl::OkStatus();
}

}  // namespace

v1::SweepParams SweepConfig::DefaultParams() {
  v1::SweepParams p;
  for (uint64_t size : sweep_limits::kDefaultSweepSizes) p.add_sizes_bytes(size);
  p.set_iterations(sweep_limits::kDefaultSweepIterations);
  p.set_qps(sweep_limits::kDefaultQps);
  p.set_tx_depth(sweep_limits::kDefaultTxDepth);
  p.set_post_list(sweep_limits::kDefaultPostList);
  p.set_seed(sweep_limits::kDefaultPatternSeed);
  p.set_qp_timeout(sweep_limits::kDefaultQpTimeout);
  p.set_cm(v1::CONNECTION_MODE_AUTO);
  return p;
}

v1::VerdictPolicy SweepConfig::DefaultPolicy() { return analysis::DefaultPolicy(); }

v1::SweepMode ToSweepMode(schedule::Mode mode) {
  switch (mode) {
    case schedule::Mode::kAllPairs: return v1::SWEEP_MODE_ALL_PAIRS;
    case schedule::Mode::kQuick: return v1::SWEEP_MODE_QUICK;
    case schedule::Mode::kRing: return v1::SWEEP_MODE_RING;
    case schedule::Mode::kPairs: return v1::SWEEP_MODE_PAIRS;
    case schedule::Mode::kIncast: return v1::SWEEP_MODE_INCAST;
    case schedule::Mode::kCrossRail: return v1::SWEEP_MODE_CROSS_RAIL;
    case schedule::Mode::kCover: return v1::SWEEP_MODE_COVER;
    case schedule::Mode::kShift: return v1::SWEEP_MODE_SHIFT;
  }
  return v1::SWEEP_MODE_UNSPECIFIED;
}

absl::StatusOr<schedule::Mode> FromSweepMode(v1::SweepMode mode, absl::string_view name) {
  switch (mode) {
    case v1::SWEEP_MODE_UNSPECIFIED:
    case v1::SWEEP_MODE_ALL_PAIRS: return schedule::Mode::kAllPairs;
    case v1::SWEEP_MODE_QUICK: return schedule::Mode::kQuick;
    case v1::SWEEP_MODE_RING: return schedule::Mode::kRing;
    case v1::SWEEP_MODE_PAIRS: return schedule::Mode::kPairs;
    case v1::SWEEP_MODE_INCAST: return schedule::Mode::kIncast;
    case v1::SWEEP_MODE_CROSS_RAIL: return schedule::Mode::kCrossRail;
    case v1::SWEEP_MODE_COVER: return schedule::Mode::kCover;
    case v1::SWEEP_MODE_SHIFT: return schedule::Mode::kShift;
    default: break;
  }
  return Bad(
      name, " ", static_cast<int>(mode),
      ": give SWEEP_MODE_ALL_PAIRS, SWEEP_MODE_QUICK, SWEEP_MODE_RING, "
      "SWEEP_MODE_PAIRS, SWEEP_MODE_INCAST, SWEEP_MODE_CROSS_RAIL, SWEEP_MODE_COVER or SWEEP_MODE_SHIFT");
}

absl::StatusOr<SweepConfig> ConfigFromSpec(const v1::SweepSpec& s, const FieldNames& n) {
  SweepConfig c;
  GDR_RETURN_IF_ERROR(ApplySchedule(s, n, &c));
  GDR_RETURN_IF_ERROR(ApplyParams(s, n, &c));
  GDR_ASSIGN_OR_RETURN(c.memory, MemoryOf(s, n));
  GDR_RETURN_IF_ERROR(ApplyPolicy(s, &c));
  GDR_RETURN_IF_ERROR(ApplyRunning(s, n, &c));
  return c;
}

}  // namespace gdrbench::controller::sweep
