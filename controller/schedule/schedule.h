// Sweep schedules: which pair tests run together in each round.
//
// A test joins NIC `rail` of node `src` (the initiator) with NIC `rail` of
// node `dst` (the target). Invariant of every schedule built here (and what
// ValidateSchedule checks): within one round no NIC and no GPU is in two
// tests. Rails run in parallel: a round of node pairs is replicated over every
// rail both nodes have, split into rail groups only when two rails of a node
// share a GPU.
//
// Modes:
//   all-pairs  round-robin 1-factorization: with bidirectional tests N-1
//              rounds for even N and N for odd N; one direction per sub-round
//              doubles that (both minimal: a NIC is in one test per round).
//              Its rounds are made one at a time as they are asked for
//              (all_pairs.h): 1,024 x 8 holds no 8.4 M tests.
//   quick      k random perfect matchings (seeded; odd N: one node rests).
//   ring       node i -> node i+1 (mod N); bidirectional: each ring edge once.
//   pairs      a custom list of (src, dst) node pairs.
//   incast     `fan_in` = K senders write to one target at once (one
//              direction only): target t is written by t+1 .. t+K (mod N),
//              every node is a target once per rail, and groups of K+1
//              node-disjoint nodes share a round. The target's NIC (and GPU)
//              is deliberately in K tests of that round; a sender's is in one,
//              and no node is a sender and a target in one round.
//   cross-rail rail i of A to rail j != i of B (one direction per test):
//              every ordered node pair once per rail shift s = 1 .. R-1 (rail
//              r of A writes to rail (r + s) mod R of B), over the all-pairs
//              rounds; every (src rail, dst rail) combination both nodes have
//              is tested once. Needs nodes with 2 rails or more. The
//              invariant holds with each end's own rail: the sender's NIC is
//              (src, rail), the target's (dst, dst_rail).
//   cover      rounds planned on the fabric's cables (controller/topology/
//   shift      cover.h, made by controller/sweep/fabric_plan.h): every cable
//              carries a flow (cover) or every leaf pair of each rail plane
//              runs (shift). The schedule takes `planned` as given, one
//              direction per test; a planned round whose tests share a GPU
//              (two rails of a node on one GPU) or break the cap is split
//              into as few rounds as keep the invariant.
// `max_concurrent` > 0 caps the tests of one round (for oversubscribed fabrics).
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/sweep_limits.h"

namespace gdrbench::controller::schedule {

enum class Mode { kAllPairs, kQuick, kRing, kPairs, kIncast, kCrossRail, kCover, kShift };

// "all-pairs", "quick", "ring", "pairs", "incast", "cross-rail", "cover",
// "shift"; INVALID_ARGUMENT otherwise.
absl::StatusOr<Mode> ParseMode(absl::string_view name);
const char* ModeName(Mode mode);
// cover and shift: modes whose rounds come from the fabric (a topology).
bool FabricMode(Mode mode);

struct Test {
  static constexpr uint32_t kSameRail = UINT32_MAX;
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t rail = 0;  // the initiator's (src's) rail
  bool bidirectional = false;
  // --mode cross-rail: the target's rail; kSameRail (every other mode): the
  // target uses `rail` too. Read it through TargetRail().
  uint32_t dst_rail = kSameRail;
  uint32_t TargetRail() const { return dst_rail == kSameRail ? rail : dst_rail; }
  bool CrossRail() const { return TargetRail() != rail; }
};

// The shape of one node as the scheduler sees it.
struct NodeShape {
  // GPU index per rail, -1 when the rail has no GPU (host memory). The size is
  // the node's rail count.
  std::vector<int> rail_gpu;
};

struct ScheduleOptions {
  Mode mode = Mode::kAllPairs;
  bool bidirectional = false;
  uint32_t quick_matchings = sweep_limits::kDefaultQuickRounds;
  uint64_t seed = sweep_limits::kDefaultScheduleSeed;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // mode kPairs: node indices
  uint32_t max_concurrent = 0;                       // 0 = no cap
  uint32_t fan_in = 0;                               // mode kIncast: K, 1 <= K < nodes
  // Modes kCover, kShift: the rounds the fabric plan made, each test one
  // direction (bidirectional false), its rails those of the two host ports.
  std::vector<std::vector<Test>> planned;
};

// How many tests of one round may write into one target NIC: `fan_in` in
// mode kIncast, 1 (every NIC and GPU in one test) otherwise.
uint32_t MaxFanIn(const ScheduleOptions& options);

class AllPairsRounds;

// A schedule's rounds. Either stored (every test held: the modes whose
// rounds are packed or planned, retests) or generated (all-pairs: an index
// of the rounds, each round's tests made when asked for, all_pairs.h), so
// that a 1,024 x 8 all-pairs run never holds its 8.4 M tests. Copies share a
// generated schedule's index. Const methods are thread-safe.
class Schedule {
 public:
  Schedule() = default;
  // A generated schedule (BuildSchedule makes it for all-pairs).
  explicit Schedule(std::shared_ptr<const AllPairsRounds> generated);

  size_t rounds() const;
  size_t tests() const;
  // Round r's tests in order: a copy (a generated schedule makes it now,
  // O(nodes + its tests)). RoundInto reuses `out`'s storage.
  std::vector<Test> Round(size_t r) const;
  void RoundInto(size_t r, std::vector<Test>* out) const;
  size_t RoundSize(size_t r) const;
  size_t MaxRoundSize() const;
  // Every test, round by round, one round held at a time.
  template <typename Fn>
  void ForEachTest(Fn&& fn) const {
    std::vector<Test> round;
    for (size_t r = 0; r < rounds(); ++r) {
      RoundInto(r, &round);
      for (const Test& t : round) fn(t);
    }
  }
  // Every test in one vector: O(tests) memory (168 MB at 1,024 x 8), for
  // small schedules and tests; production code walks rounds (RoundInto,
  // ForEachTest).
  std::vector<Test> AllTests() const;
  bool generated() const { return generated_ != nullptr; }

  // Builder side (a stored schedule; never called on a generated one).
  void Add(const Test& t) { tests_.push_back(t); }
  void CloseRound() {
    if (round_begin_.empty()) round_begin_.push_back(0);
    if (tests_.size() > round_begin_.back()) round_begin_.push_back(tests_.size());
  }
  void Reserve(size_t tests) { tests_.reserve(tests); }

 private:
  std::vector<Test> tests_;
  std::vector<size_t> round_begin_;
  std::shared_ptr<const AllPairsRounds> generated_;
};

// INVALID_ARGUMENT for fewer than 2 nodes, quick_matchings == 0, a pair that
// names an unknown node or a node with itself, no rail shared by any
// scheduled pair, (incast) a fan-in outside 1 .. N-1, --bidirectional, or
// a cap below the fan-in (a target's K senders must share a round),
// (cross-rail) --bidirectional or no node with 2 rails, or (cover, shift)
// --bidirectional, no planned round, or a planned test naming a node or a
// rail the shapes lack.
absl::StatusOr<Schedule> BuildSchedule(const std::vector<NodeShape>& nodes,
                                       const ScheduleOptions& options);

// The invariant every schedule that runs must keep (SweepRunner checks each
// one before its first test): within one round no NIC and no GPU is in two
// tests. A NIC is (node, rail): (src, rail) for the initiator and
// (dst, TargetRail()) for the target; a GPU is (node, rail_gpu[rail]) when that is
// >= 0, so two rails of one node that share a GPU (rail_gpu equal) count as
// one GPU: with GPU memory a GPU is never in two tests at once. Host memory
// has rail_gpu -1 everywhere (see run::Shapes) and only NICs count.
// FAILED_PRECONDITION naming the round, the node and the NIC/GPU when a NIC
// or a GPU is in two tests of one round, or a test names a node or a rail
// the shapes lack.
// `max_fan_in` > 1 (incast, see MaxFanIn) relaxes the target side only: a
// target's NIC and GPU may be in up to `max_fan_in` tests of a round when
// every one of them writes to it; a sender's NIC and GPU stay in one test,
// and a NIC that sends is never a target in the same round.
absl::Status ValidateSchedule(const Schedule& schedule, const std::vector<NodeShape>& nodes,
                              uint32_t max_fan_in = 1);

// Packs arbitrary `tests` (outlier retests, incast, cross-rail, ...) into
// rounds that keep that invariant: first fit, in the order given, each test
// in the first round where its NICs and GPUs (the target's of TargetRail())
// are free and fewer than
// `max_concurrent` tests run (0 = no cap). The result passes
// ValidateSchedule. Cost O(tests x rounds). INVALID_ARGUMENT for a test
// whose node or rail `nodes` lacks, or whose source is its target.
absl::StatusOr<Schedule> PackRounds(std::span<const Test> tests,
                                    const std::vector<NodeShape>& nodes, uint32_t max_concurrent);

// Parses a pair list: one "SRC DST" per line (whitespace or "->" between),
// '#' comments and blank lines ignored; names resolve through `names`.
// INVALID_ARGUMENT "<source>:<line>: ..." for unknown names or bad lines.
absl::StatusOr<std::vector<std::pair<uint32_t, uint32_t>>> ParsePairList(
    absl::string_view text, absl::string_view source, const std::vector<std::string>& names);

// Wall-time estimate of one test and of a whole schedule (rounds run one
// after another; tests of a round in parallel).
struct EstimateParams {
  std::vector<uint64_t> sizes_bytes;
  uint64_t iterations = 0;          // per size; used when duration_ns == 0
  int64_t duration_ns = 0;          // per size
  uint64_t warmup_iterations = 0;
  double link_gbps = 100;           // expected rate, for iteration-based sizes
  double per_test_overhead_s = 0.05;  // RPCs, connection set-up, verify
  bool verify = false;
};
double EstimateTestSeconds(const EstimateParams& params);
double EstimateScheduleSeconds(const Schedule& schedule, const EstimateParams& params);

}  // namespace gdrbench::controller::schedule
