#include "controller/sweep/params.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/sweep_limits.h"

namespace gdrbench::controller::sweep {

const FieldNames kSpecFields = {
    "sweep_mode", "fan_in", "params.sizes_bytes", "params.iterations", "params.duration_ns",
    "params.warmup_iterations", "params.qps", "params.tx_depth", "params.post_list",
    "params.qp_timeout", "params.cm", "params.gid_index", "params.test", "memory_kinds",
    "quick_rounds", "retest_low", "parallel", "policy", "params.sl", "params.tclass"};
const FieldNames kLegacySpecFields = {
    "mode", "fan_in", "sizes", "iterations", "duration_s", "params.warmup_iterations", "qps",
    "params.tx_depth", "params.post_list", "params.qp_timeout", "cm", "params.gid_index",
    "params.test", "memory", "quick_rounds", "retest_low", "parallel", "policy", "params.sl",
    "params.tclass"};
const FieldNames kFlagNames = {
    "--mode", "--fan-in", "--sizes", "--iterations", "--duration", "--warmup", "--qps",
    "--tx-depth", "--post-list", "--qp-timeout", "--cm", "--gid-index", "--test", "--memory",
    "--quick-rounds", "--retest-low", "--parallel", "verdict policy", "--sl", "--tclass"};

namespace {

namespace limits = sweep_limits;

constexpr absl::string_view kForms =
    "expected 'all', a list like '2,64K,1M' or a power-of-two range like '2-8M' "
    "(suffixes K, M, G)";

absl::Status Bad(auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); }

absl::StatusOr<uint64_t> ParseOne(absl::string_view text) {
  std::string t = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  absl::string_view v = t;
  if (!absl::ConsumeSuffix(&v, "IB")) (void)absl::ConsumeSuffix(&v, "B");
  uint64_t mult = 1;
  if (absl::ConsumeSuffix(&v, "K")) {
    mult = 1ull << 10;
  } else if (absl::ConsumeSuffix(&v, "M")) {
    mult = 1ull << 20;
  } else if (absl::ConsumeSuffix(&v, "G")) {
    mult = 1ull << 30;
  }
  uint64_t n = 0;
  if (v.empty() || !absl::SimpleAtoi(v, &n) || n == 0) {
    return Bad("bad message size '", text, "': ", kForms);
  }
  if (n > limits::kMaxSizeBytes / mult) {
    return Bad("message size '", text, "' is above the ", FormatSizes({limits::kMaxSizeBytes}), " limit");
  }
  return n * mult;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

absl::Status ValidateSizes(const v1::SweepParams& p, absl::string_view name) {
  const auto& s = p.sizes_bytes();
  if (s.empty() || static_cast<size_t>(s.size()) > limits::kMaxSizes) {
    return Bad(name, ": ", s.size(), " sizes given; give 1 .. ", limits::kMaxSizes, " per sweep");
  }
  for (int i = 0; i < s.size(); ++i) {
    if (s[i] < limits::kMinSizeBytes || s[i] > limits::kMaxSizeBytes) {
      return Bad(name, " ", s[i], ": give ", limits::kMinSizeBytes, " .. ", limits::kMaxSizeBytes,
                 " bytes");
    }
    if (i > 0 && s[i] <= s[i - 1]) return Bad(name, ": ascending and without duplicates, got ", s[i - 1],
                                              " then ", s[i]);
  }
  return absl::OkStatus();
}

// Iterations, duration and warm-up: one of the first two at most (neither:
// the agent's default iterations).
absl::Status ValidateAmount(const v1::SweepParams& p, const FieldNames& n) {
  if (p.duration_ns() < 0 || p.duration_ns() > limits::kMaxDurationNs) {
    return Bad(n.duration, " ", p.duration_ns(), " ns: give 0 .. ", limits::kMaxDurationNs, " ns per size");
  }
  if (p.duration_ns() > 0 && p.iterations() > 0) {
    return Bad(n.iterations, " and ", n.duration, " exclude each other: give one");
  }
  if (p.iterations() > limits::kMaxIterations) {
    return Bad(n.iterations, " ", p.iterations(), ": at most ", limits::kMaxIterations);
  }
  if (p.warmup_iterations() > limits::kMaxIterations) {
    return Bad(n.warmup, " ", p.warmup_iterations(), ": at most ", limits::kMaxIterations);
  }
  return absl::OkStatus();
}

absl::Status ValidateQueues(const v1::SweepParams& p, const FieldNames& n) {
  if (p.qps() < 1 || p.qps() > limits::kMaxQps) return Bad(n.qps, " ", p.qps(), ": give 1 .. ", limits::kMaxQps);
  if (p.tx_depth() > limits::kMaxTxDepth) return Bad(n.tx_depth, " ", p.tx_depth(), ": at most ", limits::kMaxTxDepth);
  if (p.tx_depth() < 1) return Bad(n.tx_depth, " 0: give 1 .. ", limits::kMaxTxDepth);
  if (p.post_list() < 1 || p.post_list() > limits::kMaxPostList) {
    return Bad(n.post_list, " ", p.post_list(), ": give 1 .. ", limits::kMaxPostList);
  }
  if (p.qp_timeout() < limits::kMinQpTimeout || p.qp_timeout() > limits::kMaxQpTimeout) {
    return Bad(n.qp_timeout, " ", p.qp_timeout(), ": give ", limits::kMinQpTimeout, " .. ",
               limits::kMaxQpTimeout, " (4.096 us x 2^N; perftest's ", limits::kDefaultQpTimeout, ")");
  }
  return absl::OkStatus();
}

// Service level and traffic class (perftest -S / --tclass).
absl::Status ValidateQos(const v1::SweepParams& p, const FieldNames& n) {
  if (p.has_sl() && p.sl() > limits::kMaxServiceLevel) {
    return Bad(n.sl, " ", p.sl(), ": give 0 .. ", limits::kMaxServiceLevel, " (the service level, perftest -S)");
  }
  if (p.has_sl() && p.sl() != 0 && p.cm() == v1::CONNECTION_MODE_RDMA_CM) {
    return Bad(n.sl, " ", p.sl(), " with ", n.cm, " rdma_cm: rdma_cm takes the service level from the path "
               "(InfiniBand) or the traffic class (RoCE); give ", n.tclass, ", or connect out of band (", n.cm,
               " oob) to set the service level");
  }
  if (p.has_tclass() && p.tclass() > limits::kMaxTrafficClass) {
    return Bad(n.tclass, " ", p.tclass(), ": give 0 .. ", limits::kMaxTrafficClass,
               " (the traffic class, DSCP << 2 | ECN, perftest --tclass)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ParseSizes(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return Bad("no sizes given: ", kForms);
  if (absl::AsciiStrToLower(t) == "all") return limits::AllSizes();
  std::vector<uint64_t> out;
  if (absl::StrContains(t, '-')) {
    std::vector<absl::string_view> ends = absl::StrSplit(t, '-');
    if (ends.size() != 2) return Bad("bad size range '", t, "': ", kForms);
    absl::StatusOr<uint64_t> lo = ParseOne(ends[0]);
    if (!lo.ok()) return lo.status();
    absl::StatusOr<uint64_t> hi = ParseOne(ends[1]);
    if (!hi.ok()) return hi.status();
    if (!IsPowerOfTwo(*lo) || !IsPowerOfTwo(*hi) || *lo > *hi) {
      return Bad("bad size range '", t, "': both ends must be powers of two, low <= high");
    }
    for (uint64_t s = *lo; s <= *hi; s <<= 1) out.push_back(s);
  } else {
    for (absl::string_view part : absl::StrSplit(t, ',')) {
      absl::StatusOr<uint64_t> s = ParseOne(part);
      if (!s.ok()) return s.status();
      out.push_back(*s);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > limits::kMaxSizes) {
    return Bad(out.size(), " sizes given; at most ", limits::kMaxSizes, " per sweep");
  }
  return out;
}

std::string FormatSizes(absl::Span<const uint64_t> sizes) {
  return absl::StrJoin(sizes, ",", [](std::string* out, uint64_t s) {
    const char* unit = "";
    for (const char* u : {"K", "M", "G"}) {
      if (s < 1024 || s % 1024 != 0) break;
      s /= 1024;
      unit = u;
    }
    absl::StrAppend(out, s, unit);
  });
}

absl::StatusOr<int64_t> DurationNs(double seconds, absl::string_view name) {
  constexpr double kMaxS = limits::kMaxDurationNs / 1e9;
  if (!(seconds >= 0) || seconds > kMaxS) return Bad(name, " ", seconds, ": give 0 .. ", kMaxS, " seconds per size");
  return static_cast<int64_t>(std::llround(seconds * 1e9));
}

absl::StatusOr<v1::ConnectionMode> ParseConnectionMode(absl::string_view text, absl::string_view name) {
  if (text == "auto") return v1::CONNECTION_MODE_AUTO;
  if (text == "rdma_cm") return v1::CONNECTION_MODE_RDMA_CM;
  if (text == "oob") return v1::CONNECTION_MODE_OOB;
  return Bad(name, " '", text, "': give auto, rdma_cm or oob");
}

absl::string_view MemoryKindName(v1::MemoryKind kind) {
  switch (kind) {
    case v1::MEMORY_KIND_HOST: return "host";
    case v1::MEMORY_KIND_HUGEPAGE: return "hugepage";
    case v1::MEMORY_KIND_GPU: return "gpu";
    case v1::MEMORY_KIND_GPU_STAGED: return "gpu-staged";
    default: return "";
  }
}

absl::StatusOr<std::vector<v1::MemoryKind>> ParseMemoryKinds(absl::string_view text) {
  std::vector<v1::MemoryKind> out;
  std::set<absl::string_view> seen;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return Bad("memory '", text, "': an empty kind in the list; give kinds separated by commas, e.g. host,gpu");
    }
    if (!seen.insert(item).second) return Bad("memory '", text, "': ", item, " is named twice; name each kind once");
    v1::MemoryKind kind = v1::MEMORY_KIND_UNSPECIFIED;
    for (int k = v1::MemoryKind_MIN; k <= v1::MemoryKind_MAX; ++k) {
      if (v1::MemoryKind_IsValid(k) && MemoryKindName(static_cast<v1::MemoryKind>(k)) == item) {
        kind = static_cast<v1::MemoryKind>(k);
      }
    }
    if (kind == v1::MEMORY_KIND_UNSPECIFIED) {
      return Bad("memory: expected host, hugepage, gpu or gpu-staged, or a list of them (host,gpu), got '",
                 text, "'");
    }
    out.push_back(kind);
  }
  return out;
}

absl::Status ValidateParams(const v1::SweepParams& p, const FieldNames& n) {
  if (absl::Status st = ValidateSizes(p, n.sizes); !st.ok()) return st;
  if (absl::Status st = ValidateAmount(p, n); !st.ok()) return st;
  if (absl::Status st = ValidateQueues(p, n); !st.ok()) return st;
  if (p.has_gid_index() && (p.gid_index() < 0 || p.gid_index() > limits::kMaxGidIndex)) {
    return Bad(n.gid_index, " ", p.gid_index(), ": give 0 .. ", limits::kMaxGidIndex);
  }
  if (!v1::ConnectionMode_IsValid(p.cm())) {
    return Bad(n.cm, " ", p.cm(), ": give CONNECTION_MODE_AUTO, CONNECTION_MODE_RDMA_CM or CONNECTION_MODE_OOB");
  }
  if (!v1::TestKind_IsValid(p.test())) {
    return Bad(n.test, " ", p.test(), ": give TEST_KIND_WRITE_BW or TEST_KIND_WRITE_LAT");
  }
  if (absl::Status st = ValidateQos(p, n); !st.ok()) return st;
  if (p.test() == v1::TEST_KIND_WRITE_LAT && p.bidirectional()) {
    return Bad(n.test, " write_lat is a ping-pong: not bidirectional");
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::sweep
