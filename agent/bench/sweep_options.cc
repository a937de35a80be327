#include "agent/bench/sweep_options.h"

#include <infiniband/verbs.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gdrbench::agent::bench {

std::string FormatSize(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return absl::StrCat(bytes >> 30, "G");
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return absl::StrCat(bytes >> 20, "M");
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return absl::StrCat(bytes >> 10, "K");
  return absl::StrCat(bytes);
}

absl::Status Validate(const SweepOptions& o) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (o.sizes_bytes.empty()) return bad("no message sizes: give at least one (or 'all')");
  if (o.sizes_bytes.size() > kMaxSizes) {
    return bad(o.sizes_bytes.size(), " sizes given; at most ", kMaxSizes, " per sweep");
  }
  for (size_t i = 0; i < o.sizes_bytes.size(); ++i) {
    uint64_t s = o.sizes_bytes[i];
    if (s < kMinSizeBytes || s > kMaxSizeBytes) {
      return bad("message size ", s, " B is outside 1 B .. ", FormatSize(kMaxSizeBytes));
    }
    if (i > 0 && s <= o.sizes_bytes[i - 1]) {
      return bad("message sizes must be strictly ascending (", o.sizes_bytes[i - 1], " then ", s,
                 ")");
    }
  }
  if ((o.iterations == 0) == (o.duration_ns <= 0)) {
    return bad("give exactly one of iterations (> 0) and duration (> 0) per size");
  }
  if (o.duration_ns < 0 || o.duration_ns > kMaxDurationNs) {
    return bad("duration per size must be 0 .. ", kMaxDurationNs / 1'000'000'000, " s");
  }
  if (o.iterations > kMaxIterations) {
    return bad("iterations ", o.iterations, " above the limit of ", kMaxIterations);
  }
  if (o.warmup_iterations > kMaxIterations) {
    return bad("warm-up iterations ", o.warmup_iterations, " above the limit of ",
               kMaxIterations);
  }
  if (o.qps < 1 || o.qps > kMaxQps) return bad("qps ", o.qps, " outside 1 .. ", kMaxQps);
  if (o.tx_depth < 1 || o.tx_depth > kMaxTxDepth) {
    return bad("tx depth ", o.tx_depth, " outside 1 .. ", kMaxTxDepth);
  }
  if (o.post_list < 1 || o.post_list > kMaxPostList) {
    return bad("post list ", o.post_list, " outside 1 .. ", kMaxPostList);
  }
  if (o.cq_moderation < 1 || o.cq_moderation > o.tx_depth) {
    return bad("CQ moderation ", o.cq_moderation, " outside 1 .. tx depth (", o.tx_depth, ")");
  }
  if (o.cq_moderation % o.post_list != 0) {
    return bad("CQ moderation ", o.cq_moderation, " must be a multiple of the post list (",
               o.post_list, ")");
  }
  if (o.iterations % o.post_list != 0 || o.warmup_iterations % o.post_list != 0) {
    return bad("iterations and warm-up iterations must be multiples of the post list (",
               o.post_list, ")");
  }
  if (o.qp_timeout < 1 || o.qp_timeout > kMaxQpTimeout) {
    return bad("QP timeout ", o.qp_timeout, " outside 1 .. ", kMaxQpTimeout,
               " (4.096 us x 2^N; perftest's default is ", kDefaultQpTimeout, ")");
  }
  if (o.sl > 15) return bad("service level ", int{o.sl}, " outside 0 .. 15");
  if (o.tclass < -1 || o.tclass > 255) return bad("traffic class ", o.tclass, " outside 0 .. 255");
  if (o.test == TestKind::kWriteLat) {
    if (o.qps != 1) return bad("write_lat is a ping-pong on one QP (qps ", o.qps, ")");
    if (o.bidirectional) return bad("write_lat is a ping-pong: --bidirectional does not apply");
    if (o.verify) return bad("write_lat does not verify data (verify a write_bw test)");
    if (o.duration_ns > 0) return bad("write_lat runs iterations, not a duration");
    if (o.post_list != 1) return bad("write_lat posts one WRITE at a time (post list ", o.post_list, ")");
    if (o.inline_size > sweep_limits::kMaxInline) {
      return bad("inline size ", o.inline_size, " above ", sweep_limits::kMaxInline);
    }
  }
  BufferLayout layout = PlanLayout(o);
  if (layout.slice_bytes > kMaxBufferBytes / o.qps) {
    return bad("the sweep needs ", layout.slice_bytes * o.qps, " B of buffer (", o.qps,
               " QPs); the limit is ", FormatSize(kMaxBufferBytes));
  }
  return absl::OkStatus();
}

namespace {
// splitmix64's finaliser: every input bit moves every output bit.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t SizeSeed(uint64_t test_seed, uint64_t size_bytes) { return Mix(test_seed ^ Mix(size_bytes)); }

BufferLayout PlanLayout(const std::vector<uint64_t>& sizes, bool verify, bool bidirectional) {
  BufferLayout l;
  uint64_t max_size = 0;
  for (uint64_t s : sizes) max_size = std::max(max_size, s);
  // Regions start 64-byte aligned so the pattern checks stay simple to read.
  auto align = [](uint64_t v) { return (v + 63) & ~uint64_t{63}; };
  uint64_t off = align(max_size);
  if (verify) {
    for (uint64_t s : sizes) {
      l.verify_offsets.push_back(off);
      off = align(off + s);
    }
  }
  if (verify && bidirectional) {
    for (uint64_t s : sizes) {
      l.reverse_verify_offsets.push_back(off);
      off = align(off + s);
    }
  }
  l.slice_bytes = std::max<uint64_t>(off, 64);
  return l;
}

int MrAccess(const SweepOptions& o) {
  return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
         (o.relaxed_ordering ? IBV_ACCESS_RELAXED_ORDERING : 0);
}

BufferLayout PlanLayout(const SweepOptions& o) {
  if (o.test != TestKind::kWriteLat) return PlanLayout(o.sizes_bytes, o.verify, o.bidirectional);
  BufferLayout l = PlanLayout(o.sizes_bytes, false, false);
  l.recv_offset = l.slice_bytes;
  l.slice_bytes *= 2;
  return l;
}

namespace {
// perftest's flags for what this test sets beyond its defaults: relaxed
// ordering off, the service level, the traffic class (-T, the TOS, through
// rdma_cm; --tclass in the GRH otherwise: an rdma_cm test names its server).
void AppendPathFlags(const SweepOptions& o, const std::string& server, std::string* cmd) {
  if (!o.relaxed_ordering) absl::StrAppend(cmd, " --disable_pcie_relaxed");
  if (o.sl != 0) absl::StrAppend(cmd, " -S ", int{o.sl});
  if (o.tclass >= 0) {
    if (server.empty()) {
      absl::StrAppend(cmd, " --tclass=", o.tclass);
    } else {
      absl::StrAppend(cmd, " -T ", o.tclass);
    }
  }
}
}  // namespace

std::string PerftestLatCommand(const SweepOptions& o, uint64_t size, const std::string& device,
                               int gid_index, const std::string& server_address) {
  std::string cmd = absl::StrCat("ib_write_lat -d ", device);
  if (gid_index >= 0) absl::StrAppend(&cmd, " -x ", gid_index);
  absl::StrAppend(&cmd, " -s ", size, " -n ", o.iterations, " -I ", o.inline_size);
  if (o.qp_timeout != kDefaultQpTimeout) absl::StrAppend(&cmd, " -u ", o.qp_timeout);
  AppendPathFlags(o, server_address, &cmd);
  if (!server_address.empty()) absl::StrAppend(&cmd, " ", server_address);
  return cmd;
}

std::string PerftestCommand(const SweepOptions& o, uint64_t size, const std::string& device,
                            int gid_index, const std::string& server_address) {
  std::string cmd = absl::StrCat("ib_write_bw -d ", device);
  if (gid_index >= 0) absl::StrAppend(&cmd, " -x ", gid_index);
  absl::StrAppend(&cmd, " -s ", size);
  if (o.duration_ns > 0) {
    // perftest's -D T measures only [T/4, T - T/4] (its margin, duration / 4
    // unless --margin): -D 2N measures N seconds, after N/2 s unmeasured.
    // perftest reports no BW peak in duration mode; gdrbench's is its own.
    absl::StrAppend(&cmd, " -D ", 2 * std::max<int64_t>(1, o.duration_ns / 1'000'000'000));
  } else {
    absl::StrAppend(&cmd, " -n ", o.iterations);
  }
  absl::StrAppend(&cmd, " -q ", o.qps, " -t ", o.tx_depth, " -Q ", o.cq_moderation, " -l ",
                  o.post_list);
  if (o.qp_timeout != kDefaultQpTimeout) absl::StrAppend(&cmd, " -u ", o.qp_timeout);
  if (o.bidirectional) absl::StrAppend(&cmd, " -b");
  AppendPathFlags(o, server_address, &cmd);
  absl::StrAppend(&cmd, " --report_gbits");
  if (!server_address.empty()) absl::StrAppend(&cmd, " ", server_address);
  return cmd;
}

}  // namespace gdrbench::agent::bench
