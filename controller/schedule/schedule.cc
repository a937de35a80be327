#include "controller/schedule/schedule.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/limits.h"
#include "controller/schedule/all_pairs.h"
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
    case Mode::kIncast:
      return SaturatingMul(SaturatingMul(n, o.fan_in), max_rails);
    case Mode::kCrossRail:  // an upper bound: every ordered pair, every (rail, other rail)
      return SaturatingMul(SaturatingMul(n, n == 0 ? 0 : n - 1),
                           SaturatingMul(max_rails, max_rails == 0 ? 0 : max_rails - 1));
    case Mode::kCover:
    case Mode::kShift: {
      uint64_t tests = 0;
      for (const auto& round : o.planned) tests += round.size();
      return tests;
    }
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

// cover, shift: the planned rounds name real nodes and rails, one
// direction each.
absl::Status CheckPlanned(const std::vector<NodeShape>& nodes, const ScheduleOptions& o) {
  const char* mode = ModeName(o.mode);
  if (o.bidirectional) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode ", mode,
                     " plans one direction per flow (each direction's cables are planned): leave out "
                     "--bidirectional"));
  }
  if (o.planned.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode ", mode, " needs the fabric's cables: give --topology (a planned round)"));
  }
  for (size_t r = 0; r < o.planned.size(); ++r) {
    for (const Test& t : o.planned[r]) {
      if (t.src >= nodes.size() || t.dst >= nodes.size() || t.src == t.dst || t.bidirectional ||
          t.rail >= nodes[t.src].rail_gpu.size() || t.TargetRail() >= nodes[t.dst].rail_gpu.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--mode ", mode, ": planned round ", r, " has a test (node ", t.src, " rail ", t.rail,
            " -> node ", t.dst, " rail ", t.TargetRail(), ") the nodes' shapes do not have"));
      }
    }
  }
  return absl::OkStatus();
}

// Each planned round as one round when it keeps the invariant and the cap,
// else split by PackRounds (two rails of a node on one GPU).
absl::Status EmitPlanned(const std::vector<NodeShape>& nodes, const ScheduleOptions& o, Schedule* s) {
  for (const std::vector<Test>& round : o.planned) {
    absl::StatusOr<Schedule> packed = PackRounds(round, nodes, o.max_concurrent);
    if (!packed.ok()) return packed.status();
    for (size_t r = 0; r < packed->rounds(); ++r) {
      for (const Test& t : packed->Round(r)) s->Add(t);
      s->CloseRound();
    }
  }
  return absl::OkStatus();
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

// The incast parameters, checked before the plan is counted.
absl::Status CheckIncast(uint32_t n, const ScheduleOptions& o) {
  const uint32_t k = o.fan_in;
  if (k < 1 || k >= n) {
    return absl::InvalidArgumentError(absl::StrCat("--fan-in ", k, ": give 1 .. ", n - 1,
                                                   " (senders per target, fewer than the ", n, " nodes)"));
  }
  if (o.bidirectional) {
    return absl::InvalidArgumentError(
        "--mode incast is one-directional (K senders write to one target): no --bidirectional");
  }
  if (o.max_concurrent > 0 && o.max_concurrent < k) {
    return absl::InvalidArgumentError(absl::StrCat("--max-concurrent ", o.max_concurrent, " is below --fan-in ",
                                                   k, ": a target's senders must run in one round"));
  }
  return absl::OkStatus();
}

// Incast: target t gets senders t+1 .. t+K (mod n); groups (target and its
// senders) are packed first fit into rounds of node-disjoint groups, then
// each round is replicated over the rail groups, a whole group's tests of a
// rail always in one round (a cap closes rounds between groups only).
absl::Status EmitIncast(const std::vector<NodeShape>& nodes, const ScheduleOptions& o, Schedule* s) {
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  const uint32_t k = o.fan_in;
  std::vector<std::vector<uint32_t>> rounds;  // targets per round
  std::vector<std::vector<bool>> busy;
  for (uint32_t t = 0; t < n; ++t) {
    size_t r = 0;
    for (; r < rounds.size(); ++r) {
      bool free = true;
      for (uint32_t j = 0; j <= k && free; ++j) free = !busy[r][(t + j) % n];
      if (free) break;
    }
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back(n, false);
    }
    rounds[r].push_back(t);
    for (uint32_t j = 0; j <= k; ++j) busy[r][(t + j) % n] = true;
  }
  const auto groups = RailGroups(nodes);
  for (const auto& targets : rounds) {
    for (const auto& g : groups) {
      size_t in_round = 0;
      for (uint32_t t : targets) {
        for (uint32_t r : g) {
          std::vector<Test> tests;
          for (uint32_t j = 1; j <= k; ++j) {
            const uint32_t src = (t + j) % n;
            if (r < nodes[src].rail_gpu.size() && r < nodes[t].rail_gpu.size()) tests.push_back({src, t, r, false});
          }
          if (o.max_concurrent > 0 && in_round + tests.size() > o.max_concurrent) {
            s->CloseRound();
            in_round = 0;
          }
          for (const Test& x : tests) s->Add(x);
          in_round += tests.size();
        }
      }
      s->CloseRound();
    }
  }
  return absl::OkStatus();
}

size_t MaxRails(const std::vector<NodeShape>& nodes) {
  size_t rails = 0;
  for (const auto& nd : nodes) rails = std::max(rails, nd.rail_gpu.size());
  return rails;
}

// The cross-rail parameters, checked before the plan is counted.
absl::Status CheckCrossRail(const std::vector<NodeShape>& nodes, const ScheduleOptions& o) {
  if (o.bidirectional) {
    return absl::InvalidArgumentError(
        "--mode cross-rail is one-directional (rail i of A writes to rail j of B): no --bidirectional");
  }
  if (const size_t rails = MaxRails(nodes); rails < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mode cross-rail needs nodes with at least 2 rails, and every node here has ", rails,
        ": give the inventory's nodes their rail NICs (rails:) or use --mode all-pairs"));
  }
  return absl::OkStatus();
}

// Cross-rail: per rail shift s = 1 .. R-1 and per all-pairs round, one
// sub-round per direction in which src's rail r writes to dst's rail
// (r + s) mod R. A sub-round's pairs are node-disjoint and each node only
// sends or only receives, so NICs never collide; PackRounds splits it only
// where two rails of a node share a GPU or the cap is reached.
absl::Status EmitCrossRail(const std::vector<NodeShape>& nodes, const ScheduleOptions& o, Schedule* s) {
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  const uint32_t rails = static_cast<uint32_t>(MaxRails(nodes));
  const Factorization f = RoundRobin(n);
  std::vector<Test> tests;
  for (uint32_t shift = 1; shift < rails; ++shift) {
    for (uint32_t r = 0; r < f.rounds; ++r) {
      for (bool reversed : {false, true}) {
        tests.clear();
        for (uint32_t p = 0; p < f.pairs_per_round; ++p) {
          const auto& [a, b] = f.pairs[size_t{r} * f.pairs_per_round + p];
          const uint32_t src = reversed ? b : a, dst = reversed ? a : b;
          for (uint32_t rail = 0; rail < nodes[src].rail_gpu.size(); ++rail) {
            const uint32_t dst_rail = (rail + shift) % rails;
            if (dst_rail < nodes[dst].rail_gpu.size()) tests.push_back({src, dst, rail, false, dst_rail});
          }
        }
        absl::StatusOr<Schedule> packed = PackRounds(tests, nodes, o.max_concurrent);
        if (!packed.ok()) return packed.status();
        for (size_t k = 0; k < packed->rounds(); ++k) {
          for (const Test& t : packed->Round(k)) s->Add(t);
          s->CloseRound();
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

uint32_t MaxFanIn(const ScheduleOptions& options) {
  return options.mode == Mode::kIncast ? std::max(options.fan_in, 1u) : 1;
}

absl::StatusOr<Mode> ParseMode(absl::string_view name) {
  if (name == "all-pairs") return Mode::kAllPairs;
  if (name == "quick") return Mode::kQuick;
  if (name == "ring") return Mode::kRing;
  if (name == "pairs") return Mode::kPairs;
  if (name == "incast") return Mode::kIncast;
  if (name == "cross-rail") return Mode::kCrossRail;
  if (name == "cover") return Mode::kCover;
  if (name == "shift") return Mode::kShift;
  return absl::InvalidArgumentError(absl::StrCat(
      "--mode: expected all-pairs, quick, ring, pairs, incast, cross-rail, cover or shift, got '", name,
      "'"));
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kAllPairs: return "all-pairs";
    case Mode::kQuick: return "quick";
    case Mode::kRing: return "ring";
    case Mode::kPairs: return "pairs";
    case Mode::kIncast: return "incast";
    case Mode::kCrossRail: return "cross-rail";
    case Mode::kCover: return "cover";
    case Mode::kShift: return "shift";
  }
  return "?";
}

bool FabricMode(Mode mode) { return mode == Mode::kCover || mode == Mode::kShift; }

absl::StatusOr<Schedule> BuildSchedule(const std::vector<NodeShape>& nodes,
                                       const ScheduleOptions& o) {
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  if (n < 2 && o.mode != Mode::kPairs) {
    return absl::InvalidArgumentError(absl::StrCat("a sweep needs at least 2 nodes, got ", n));
  }
  if (o.mode == Mode::kIncast) {
    if (absl::Status st = CheckIncast(n, o); !st.ok()) return st;
  }
  if (o.mode == Mode::kCrossRail) {
    if (absl::Status st = CheckCrossRail(nodes, o); !st.ok()) return st;
  }
  if (FabricMode(o.mode)) {
    if (absl::Status st = CheckPlanned(nodes, o); !st.ok()) return st;
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
    case Mode::kAllPairs:
      // Made round by round as the runner asks (all_pairs.h): the rounds
      // EmitMatching would give for each matching of RoundRobin(n).
      s = Schedule(std::make_shared<const AllPairsRounds>(nodes, RailGroups(nodes), o.bidirectional,
                                                          o.max_concurrent));
      break;
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
    case Mode::kIncast:
      if (absl::Status st = EmitIncast(nodes, o, &s); !st.ok()) return st;
      break;
    case Mode::kCrossRail:
      if (absl::Status st = EmitCrossRail(nodes, o, &s); !st.ok()) return st;
      break;
    case Mode::kCover:
    case Mode::kShift:
      if (absl::Status st = EmitPlanned(nodes, o, &s); !st.ok()) return st;
      break;
  }
  if (!s.generated()) s.CloseRound();
  if (s.tests() == 0) {
    return absl::InvalidArgumentError("the schedule is empty: no scheduled pair shares a rail");
  }
  return s;
}


absl::StatusOr<Schedule> PackRounds(std::span<const Test> tests,
                                    const std::vector<NodeShape>& nodes, uint32_t max_concurrent) {
  // Resources a test holds: its two NICs and, with GPU memory, its two GPUs.
  // Keys: NIC = node * 2^32 + rail; GPU = node * 2^32 + 2^31 + gpu.
  // Each end keys its own rail: (src, rail) and (dst, TargetRail()).
  auto keys = [&](const Test& t, uint64_t out[4]) -> int {
    int k = 0;
    for (const auto& [node, rail] : {std::pair{t.src, t.rail}, std::pair{t.dst, t.TargetRail()}}) {
      out[k++] = (uint64_t{node} << 32) | rail;
      int g = nodes[node].rail_gpu[rail];
      if (g >= 0) out[k++] = (uint64_t{node} << 32) | (1u << 31) | static_cast<uint32_t>(g);
    }
    return k;
  };
  std::vector<std::unordered_set<uint64_t>> busy;  // per round
  std::vector<std::vector<Test>> rounds;
  for (const Test& t : tests) {
    for (const auto& [node, rail] : {std::pair{t.src, t.rail}, std::pair{t.dst, t.TargetRail()}}) {
      if (node >= nodes.size() || rail >= nodes[node].rail_gpu.size()) {
        return absl::InvalidArgumentError(absl::StrCat("test ", t.src, "->", t.dst, " rail ", t.rail,
                                                       t.CrossRail() ? absl::StrCat("->", t.TargetRail()) : "",
                                                       ": node ", node, " has no rail ", rail));
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

}  // namespace gdrbench::controller::schedule
