#include "controller/cli/sweep_flags.h"

#include "agent/bench/sweep_options.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gdrbench::controller::cli {
namespace {

// The agent's limits, one definition (header-only constants).
using agent::bench::kMaxIterations;
using agent::bench::kMaxPostList;
using agent::bench::kMaxQps;
using agent::bench::kMaxTxDepth;

constexpr absl::string_view kForms =
    "expected 'all', a list like '2,64K,1M' or a power-of-two range like '2-8M' "
    "(suffixes K, M, G)";
using sweep_limits::kMaxSizes;
constexpr uint64_t kMaxSize = sweep_limits::kMaxSizeBytes;

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
    return absl::InvalidArgumentError(absl::StrCat("bad message size '", text, "': ", kForms));
  }
  if (n > kMaxSize / mult) {
    return absl::InvalidArgumentError(
        absl::StrCat("message size '", text, "' is above the 1G limit"));
  }
  return n * mult;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ParseSizes(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return absl::InvalidArgumentError(absl::StrCat("no sizes given: ", kForms));
  std::vector<uint64_t> out;
  if (absl::AsciiStrToLower(t) == "all") {
    return sweep_limits::AllSizes();
  }
  if (absl::StrContains(t, '-')) {
    std::vector<absl::string_view> ends = absl::StrSplit(t, '-');
    if (ends.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("bad size range '", t, "': ", kForms));
    }
    auto lo = ParseOne(ends[0]);
    if (!lo.ok()) return lo.status();
    auto hi = ParseOne(ends[1]);
    if (!hi.ok()) return hi.status();
    if (!IsPowerOfTwo(*lo) || !IsPowerOfTwo(*hi) || *lo > *hi) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad size range '", t, "': both ends must be powers of two, low <= high"));
    }
    for (uint64_t s = *lo; s <= *hi; s <<= 1) out.push_back(s);
  } else {
    for (absl::string_view part : absl::StrSplit(t, ',')) {
      auto s = ParseOne(part);
      if (!s.ok()) return s.status();
      out.push_back(*s);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > kMaxSizes) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.size(), " sizes given; at most ", kMaxSizes, " per sweep"));
  }
  return out;
}

absl::StatusOr<v1::SweepParams> ToSweepParams(const SweepFlags& f) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  v1::SweepParams p;
  auto sizes = ParseSizes(f.sizes);
  if (!sizes.ok()) return absl::InvalidArgumentError(absl::StrCat("--sizes: ", sizes.status().message()));
  for (uint64_t s : *sizes) p.add_sizes_bytes(s);
  constexpr double kMaxDurationS = sweep_limits::kMaxDurationNs / 1e9;
  if (!(f.duration_s >= 0) || f.duration_s > kMaxDurationS) {
    return bad("--duration ", f.duration_s, ": give 0 .. ", kMaxDurationS, " seconds per size");
  }
  if (f.duration_s > 0 && f.iterations > 0) {
    return bad("--iterations and --duration exclude each other: give one");
  }
  // The agent's own limits (agent/bench/sweep_options.h), checked before any
  // agent is contacted: past them every test would fail after probing.
  if (f.iterations > kMaxIterations) return bad("--iterations ", f.iterations, ": at most ", kMaxIterations);
  if (f.warmup > kMaxIterations) return bad("--warmup ", f.warmup, ": at most ", kMaxIterations);
  if (f.qps > kMaxQps) return bad("--qps ", f.qps, ": at most ", kMaxQps);
  if (f.tx_depth > kMaxTxDepth) return bad("--tx-depth ", f.tx_depth, ": at most ", kMaxTxDepth);
  if (f.post_list == 0 || f.post_list > kMaxPostList) {
    return bad("--post-list ", f.post_list, ": give 1 .. ", kMaxPostList);
  }
  p.set_iterations(f.iterations);
  p.set_duration_ns(static_cast<int64_t>(std::llround(f.duration_s * 1e9)));
  p.set_warmup_iterations(f.warmup);
  if (f.qps == 0) return bad("--qps must be at least 1");
  if (f.tx_depth == 0) return bad("--tx-depth must be at least 1");
  p.set_qps(f.qps);
  p.set_tx_depth(f.tx_depth);
  p.set_cq_moderation(f.cq_moderation);
  p.set_post_list(f.post_list);
  p.set_bidirectional(f.bidirectional);
  p.set_verify(f.verify);
  p.set_memory(f.memory);
  p.set_seed(f.seed);
  if (f.qp_timeout < sweep_limits::kMinQpTimeout || f.qp_timeout > sweep_limits::kMaxQpTimeout) {
    return bad("--qp-timeout ", f.qp_timeout, ": give ", sweep_limits::kMinQpTimeout, " .. ",
               sweep_limits::kMaxQpTimeout, " (4.096 us x 2^N; perftest's ",
               sweep_limits::kDefaultQpTimeout, ")");
  }
  p.set_qp_timeout(f.qp_timeout);
  if (f.cm == "auto") {
    p.set_cm(v1::CONNECTION_MODE_AUTO);
  } else if (f.cm == "rdma_cm") {
    p.set_cm(v1::CONNECTION_MODE_RDMA_CM);
  } else if (f.cm == "oob") {
    p.set_cm(v1::CONNECTION_MODE_OOB);
  } else {
    return bad("--cm '", f.cm, "': give auto, rdma_cm or oob");
  }
  if (f.gid_index >= 0) {
    if (f.gid_index > sweep_limits::kMaxGidIndex) {
      return bad("--gid-index ", f.gid_index, ": give 0 .. ", sweep_limits::kMaxGidIndex);
    }
    p.set_gid_index(f.gid_index);
  } else if (f.gid_index != -1) {
    return bad("--gid-index ", f.gid_index, ": give 0 .. ", sweep_limits::kMaxGidIndex);
  }
  if (f.test == "write_bw") {
    p.set_test(v1::TEST_KIND_WRITE_BW);
  } else if (f.test == "write_lat") {
    p.set_test(v1::TEST_KIND_WRITE_LAT);
    if (f.bidirectional) return bad("--test write_lat is a ping-pong: no --bidirectional");
  } else {
    return bad("--test '", f.test, "': give write_bw or write_lat");
  }
  return p;
}

}  // namespace gdrbench::controller::cli
