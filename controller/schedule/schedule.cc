#include "controller/schedule/schedule.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/limits.h"
#include "controller/schedule/factorization.h"

namespace gdrbench::controller::schedule {
namespace {

// Rails that may run in the same round: no node maps two of them to one GPU.
std::vector<std::vector<uint32_t>> RailGroups(const std::vector<NodeShape>& nodes) {
  size_t rails = 0;
  for (const auto& n : nodes) rails = std::max(rails, n.rail_gpu.size());
  std::vector<std::vector<bool>> conflict(rails, std::vector<bool>(rails, false));
  for (const auto& n : nodes) {
    for (size_t a = 0; a < n.rail_gpu.size(); ++a) {
      for (size_t b = a + 1; b < n.rail_gpu.size(); ++b) {
        if (n.rail_gpu[a] >= 0 && n.rail_gpu[a] == n.rail_gpu[b]) conflict[a][b] = conflict[b][a] = true;
      }
    }
  }
  std::vector<std::vector<uint32_t>> groups;
  for (uint32_t r = 0; r < rails; ++r) {
    bool placed = false;
    for (auto& g : groups) {
      bool ok = std::none_of(g.begin(), g.end(), [&](uint32_t o) { return conflict[r][o]; });
      if (ok) {
        g.push_back(r);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({r});
  }
  return groups;
}

using limits::kMaxPlanTests;

// Tests the schedule will hold, counted before anything is built (all-pairs
// over 32,768 nodes would be billions): exact for all-pairs and pairs, an
// upper bound (every pair on the most rails) for quick and ring.
uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

uint64_t CountTests(const std::vector<NodeShape>& nodes, const ScheduleOptions& o) {
  const uint64_t n = nodes.size();
  const uint64_t directions = o.bidirectional ? 1 : 2;
  std::vector<uint64_t> rails;
  rails.reserve(n);
  for (const auto& nd : nodes) rails.push_back(nd.rail_gpu.size());
  const uint64_t max_rails = rails.empty() ? 0 : *std::max_element(rails.begin(), rails.end());
  switch (o.mode) {
    case Mode::kAllPairs: {
      // A pair runs on the rails both have: sorted, node k shares its r_k
      // rails with each of the n-1-k nodes after it.
      std::sort(rails.begin(), rails.end());
      uint64_t shared = 0;
      for (uint64_t k = 0; k < n; ++k) shared += SaturatingMul(rails[k], n - 1 - k);
      return SaturatingMul(shared, directions);
    }
    case Mode::kQuick:
      return SaturatingMul(SaturatingMul(uint64_t{o.quick_matchings} * (n / 2), max_rails), directions);
    case Mode::kRing:
      return SaturatingMul(n, max_rails);
    case Mode::kPairs: {
      uint64_t tests = 0;
      for (const auto& [a, b] : o.pairs) {
        if (a < n && b < n) tests += std::min(rails[a], rails[b]);
      }
      return tests;
    }
  }
  return 0;
}

// Emits node-disjoint `pairs` as one or two rounds per rail group (two when
// tests are one-directional: a->b first, then b->a), honouring the cap.
class Emitter {
 public:
  Emitter(const std::vector<NodeShape>& nodes, const ScheduleOptions& o, Schedule* s)
      : nodes_(nodes), o_(o), s_(s), groups_(RailGroups(nodes)) {}

  // `pairs` must be node-disjoint. `reverse_too`: one-directional mode emits
  // the reverse direction in a second sub-round.
  void EmitMatching(std::span<const std::pair<uint32_t, uint32_t>> pairs, bool reverse_too) {
    for (const auto& g : groups_) {
      EmitDirected(pairs, g, false);
      if (reverse_too) EmitDirected(pairs, g, true);
    }
  }

 private:
  void EmitDirected(std::span<const std::pair<uint32_t, uint32_t>> pairs,
                    const std::vector<uint32_t>& group, bool reversed) {
    size_t in_round = 0;
    const bool capped = o_.max_concurrent > 0;
    for (const auto& [a, b] : pairs) {
      const uint32_t src = reversed ? b : a, dst = reversed ? a : b;
      const size_t shared = std::min(nodes_[src].rail_gpu.size(), nodes_[dst].rail_gpu.size());
      for (uint32_t r : group) {
        if (r >= shared) continue;
        if (capped && in_round == o_.max_concurrent) {
          s_->CloseRound();
          in_round = 0;
        }
        s_->Add(Test{src, dst, r, o_.bidirectional});
        ++in_round;
      }
    }
    s_->CloseRound();
  }

  const std::vector<NodeShape>& nodes_;
  const ScheduleOptions& o_;
  Schedule* s_;
  std::vector<std::vector<uint32_t>> groups_;
};

// Greedy first-fit: splits arbitrary (directed or not) pairs into matchings.
std::vector<std::vector<std::pair<uint32_t, uint32_t>>> GreedyMatchings(
    const std::vector<std::pair<uint32_t, uint32_t>>& pairs, size_t n) {
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> rounds;
  std::vector<std::vector<bool>> busy;
  for (const auto& p : pairs) {
    size_t r = 0;
    for (; r < rounds.size(); ++r) {
      if (!busy[r][p.first] && !busy[r][p.second]) break;
    }
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back(n, false);
    }
    rounds[r].push_back(p);
    busy[r][p.first] = busy[r][p.second] = true;
  }
  return rounds;
}

}  // namespace

absl::StatusOr<Mode> ParseMode(absl::string_view name) {
  if (name == "all-pairs") return Mode::kAllPairs;
  if (name == "quick") return Mode::kQuick;
  if (name == "ring") return Mode::kRing;
  if (name == "pairs") return Mode::kPairs;
  return absl::InvalidArgumentError(
      absl::StrCat("--mode: expected all-pairs, quick, ring or pairs, got '", name, "'"));
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kAllPairs: return "all-pairs";
    case Mode::kQuick: return "quick";
    case Mode::kRing: return "ring";
    case Mode::kPairs: return "pairs";
  }
  return "?";
}

size_t Schedule::MaxRoundSize() const {
  size_t m = 0;
  for (size_t r = 0; r < rounds(); ++r) m = std::max(m, Round(r).size());
  return m;
}

absl::StatusOr<Schedule> BuildSchedule(const std::vector<NodeShape>& nodes,
                                       const ScheduleOptions& o) {
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  if (n < 2 && o.mode != Mode::kPairs) {
    return absl::InvalidArgumentError(absl::StrCat("a sweep needs at least 2 nodes, got ", n));
  }
  if (const uint64_t tests = CountTests(nodes, o); tests > kMaxPlanTests) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan has ", tests, " tests (", ModeName(o.mode), " over ", n,
        " nodes and their rails), more than the ", kMaxPlanTests,
        " one run holds: use --mode quick or ring, or split the nodes into several runs"));
  }
  Schedule s;
  Emitter emit(nodes, o, &s);
  const bool both = !o.bidirectional;  // one direction per sub-round
  switch (o.mode) {
    case Mode::kAllPairs: {
      Factorization f = RoundRobin(n);
      size_t rails = 0;
      for (const auto& nd : nodes) rails = std::max(rails, nd.rail_gpu.size());
      s.Reserve(f.pairs.size() * rails * (both ? 2 : 1));
      for (uint32_t r = 0; r < f.rounds; ++r) {
        emit.EmitMatching({f.pairs.data() + size_t{r} * f.pairs_per_round, f.pairs_per_round}, both);
      }
      break;
    }
    case Mode::kQuick: {
      if (o.quick_matchings == 0) return absl::InvalidArgumentError("--quick-rounds must be at least 1");
      std::mt19937_64 rng(o.seed);
      std::vector<uint32_t> perm(n);
      for (uint32_t k = 0; k < o.quick_matchings; ++k) {
        std::iota(perm.begin(), perm.end(), 0u);
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<std::pair<uint32_t, uint32_t>> m;
        for (uint32_t i = 0; i + 1 < n; i += 2) m.emplace_back(perm[i], perm[i + 1]);
        emit.EmitMatching(m, both);
      }
      break;
    }
    case Mode::kRing: {
      std::vector<std::pair<uint32_t, uint32_t>> edges;
      if (o.bidirectional) {
        for (uint32_t i = 0; i < (n == 2 ? 1u : n); ++i) edges.emplace_back(i, (i + 1) % n);
      } else {
        for (uint32_t i = 0; i < n; ++i) edges.emplace_back(i, (i + 1) % n);
      }
      for (const auto& m : GreedyMatchings(edges, n)) emit.EmitMatching(m, false);
      break;
    }
    case Mode::kPairs: {
      if (o.pairs.empty()) return absl::InvalidArgumentError("--pairs: the pair list is empty");
      for (const auto& [a, b] : o.pairs) {
        if (a >= n || b >= n) return absl::InvalidArgumentError("--pairs: node index out of range");
        if (a == b) return absl::InvalidArgumentError("--pairs: a node cannot be paired with itself");
      }
      for (const auto& m : GreedyMatchings(o.pairs, n)) emit.EmitMatching(m, false);
      break;
    }
  }
  s.CloseRound();
  if (s.tests() == 0) {
    return absl::InvalidArgumentError("the schedule is empty: no scheduled pair shares a rail");
  }
  return s;
}

absl::Status ValidateSchedule(const Schedule& s, const std::vector<NodeShape>& nodes) {
  // Stamp arrays indexed by node*rails+rail (NIC) and node*maxgpu+gpu (GPU):
  // a slot holding the current round number is busy.
  size_t rails = 1;
  int max_gpu = 0;
  for (const auto& n : nodes) {
    rails = std::max(rails, n.rail_gpu.size());
    for (int g : n.rail_gpu) max_gpu = std::max(max_gpu, g + 1);
  }
  std::vector<uint32_t> nic(nodes.size() * rails, UINT32_MAX);
  std::vector<uint32_t> gpu(nodes.size() * std::max(max_gpu, 1), UINT32_MAX);
  for (uint32_t r = 0; r < s.rounds(); ++r) {
    for (const Test& t : s.Round(r)) {
      for (uint32_t node : {t.src, t.dst}) {
        if (node >= nodes.size() || t.rail >= nodes[node].rail_gpu.size()) {
          return absl::FailedPreconditionError(
              absl::StrCat("round ", r, ": node ", node, " has no rail ", t.rail));
        }
        uint32_t& slot = nic[node * rails + t.rail];
        if (slot == r) {
          return absl::FailedPreconditionError(absl::StrCat(
              "round ", r, ": NIC of rail ", t.rail, " on node ", node, " is in two tests"));
        }
        slot = r;
        int g = nodes[node].rail_gpu[t.rail];
        if (g >= 0) {
          uint32_t& gs = gpu[node * std::max(max_gpu, 1) + g];
          if (gs == r) {
            return absl::FailedPreconditionError(
                absl::StrCat("round ", r, ": GPU ", g, " on node ", node, " is in two tests"));
          }
          gs = r;
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Schedule> PackRounds(std::span<const Test> tests,
                                    const std::vector<NodeShape>& nodes, uint32_t max_concurrent) {
  // Resources a test holds: its two NICs and, with GPU memory, its two GPUs.
  // Keys: NIC = node * 2^32 + rail; GPU = node * 2^32 + 2^31 + gpu.
  auto keys = [&](const Test& t, uint64_t out[4]) -> int {
    int k = 0;
    for (uint32_t node : {t.src, t.dst}) {
      out[k++] = (uint64_t{node} << 32) | t.rail;
      int g = nodes[node].rail_gpu[t.rail];
      if (g >= 0) out[k++] = (uint64_t{node} << 32) | (1u << 31) | static_cast<uint32_t>(g);
    }
    return k;
  };
  std::vector<std::unordered_set<uint64_t>> busy;  // per round
  std::vector<std::vector<Test>> rounds;
  for (const Test& t : tests) {
    for (uint32_t node : {t.src, t.dst}) {
      if (node >= nodes.size() || t.rail >= nodes[node].rail_gpu.size()) {
        return absl::InvalidArgumentError(absl::StrCat("test ", t.src, "->", t.dst, " rail ", t.rail,
                                                       ": node ", node, " has no such rail"));
      }
    }
    if (t.src == t.dst) {
      return absl::InvalidArgumentError(
          absl::StrCat("test ", t.src, "->", t.dst, ": a node cannot be tested with itself"));
    }
    uint64_t k[4];
    const int nk = keys(t, k);
    size_t r = 0;
    for (; r < rounds.size(); ++r) {
      if (max_concurrent > 0 && rounds[r].size() >= max_concurrent) continue;
      bool free = true;
      for (int i = 0; i < nk && free; ++i) free = !busy[r].count(k[i]);
      if (free) break;
    }
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[r].push_back(t);
    for (int i = 0; i < nk; ++i) busy[r].insert(k[i]);
  }
  Schedule s;
  s.Reserve(tests.size());
  for (const auto& round : rounds) {
    for (const Test& t : round) s.Add(t);
    s.CloseRound();
  }
  s.CloseRound();
  return s;
}

absl::StatusOr<std::vector<std::pair<uint32_t, uint32_t>>> ParsePairList(
    absl::string_view text, absl::string_view source, const std::vector<std::string>& names) {
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < names.size(); ++i) index.emplace(names[i], i);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    absl::string_view line = text.substr(pos, nl == absl::string_view::npos ? absl::string_view::npos
                                                                            : nl - pos);
    pos = nl == absl::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    std::string l = absl::StrReplaceAll(line, {{"->", " "}});
    std::vector<std::string> words;
    std::string w;
    for (char c : l) {
      if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
        if (!w.empty()) words.push_back(std::move(w));
        w.clear();
      } else {
        w.push_back(c);
      }
    }
    if (!w.empty()) words.push_back(std::move(w));
    if (words.empty()) continue;
    if (words.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": expected \"SRC DST\", got \"", line, "\""));
    }
    uint32_t ends[2];
    for (int i = 0; i < 2; ++i) {
      auto it = index.find(words[i]);
      if (it == index.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ":", line_no, ": node '", words[i], "' is not in the inventory"));
      }
      ends[i] = it->second;
    }
    if (ends[0] == ends[1]) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_no, ": node '", words[0], "' paired with itself"));
    }
    out.emplace_back(ends[0], ends[1]);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no pairs"));
  return out;
}

double EstimateTestSeconds(const EstimateParams& p) {
  double s = p.per_test_overhead_s;
  const double bits_per_s = std::max(p.link_gbps, 1e-3) * 1e9;
  for (uint64_t size : p.sizes_bytes) {
    const double per_wr = size * 8.0 / bits_per_s;
    if (p.duration_ns > 0) {
      s += p.duration_ns / 1e9 + p.warmup_iterations * per_wr;
    } else {
      s += (p.iterations + p.warmup_iterations) * per_wr;
    }
    if (p.verify) s += per_wr;  // one checksum pass per size, at about wire speed
  }
  return s;
}

double EstimateScheduleSeconds(const Schedule& schedule, const EstimateParams& params) {
  return schedule.rounds() * EstimateTestSeconds(params);
}

}  // namespace gdrbench::controller::schedule
