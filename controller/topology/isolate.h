// Suspects isolated, the bad cable named (issue 28, item 4): group testing
// over the flows a sweep ran, driven round by round so that the sweep runs
// each retest round for real.
//
// Evidence. Each flow is a pair of host ports (FabricIndex host indices)
// with the cables it crossed under the routing assumption (ftree: its whole
// path, FabricIndex::FtreePath; ecmp: its two host cables, and the whole
// path only when both hosts are on one leaf) and its outcome: ok, low or
// failed. A cable is judged as a whole, whichever direction a flow crossed
// it in.
//
//   - A flow that passed clears every cable of its known path.
//   - A bad flow's suspects are the cables of its known path that no
//     passing flow cleared. A bad flow whose known path is complete and
//     whose suspects are exactly one cable convicts that cable.
//   - A bad flow is explained once a cable of its path is convicted. Its
//     other suspects are not pursued: one fault per flow (a second fault on
//     the same path shows once the first is repaired).
// A conviction needs a bad flow whose every other cable carried a flow
// that passed, so where flows are low only across a bad cable, no good
// cable is ever convicted.
//
// Retests. For every suspect of every unexplained bad flow, NextRound plans
// a flow whose known path crosses that cable and no other cable that is not
// yet cleared (its partners passed before), so a low retest convicts the
// cable and a good one clears it. Partners come from the bad flow's two
// leaves and, on every leaf of its plane, the hosts at the bad flow's two
// positions (where ftree's destination-keyed uplinks repeat); a suspect is
// tried from at most two bad flows per pass of a round.
// Where no such path exists (every flow across a spine was bad, so none of
// its cables is cleared), a probe crosses the suspect with at most
// kMaxProbe uncleared cables: good, it clears them all; low, it is one more
// bad flow with fewer suspects, and its cables are doubted. A probe crosses
// at most one doubted cable (among the cables of a dead switch, probes would
// otherwise pair them all, round after round), and comes after every
// isolating retest of its round.
// Each round keeps NIC exclusivity (a host port in at most one flow) and,
// under ftree, at most one flow on each cable direction. Rounds end when no
// retest or probe can tell more, or after kMaxRounds.
// A suspect left is reported unresolved: "cannot separate X and Y: no
// exonerated path isolates them"; bad flows whose suspects all touch one
// switch, two such suspect sets or more, are reported once, as that
// switch's cables ("cannot separate the 64 cables of S-r0-p001-s05 that bad
// flows crossed: ... so the switch itself is suspect").
//
// ecmp. Only flows within one leaf have a known path, so retests stay
// within a leaf and clear or convict host cables only. A bad flow between
// leaves whose host cables are both cleared is blamed on the uplinks above
// its leaves: a leaf common to two or more such flows has its uplinks named
// as a group (the hash hides which uplink a flow took, and the bad cable may
// be further up); a lone flow leaves its two leaves' uplinks unresolved.
//
// Findings. A convicted leaf<->spine or spine<->core cable is a "cable"
// ("rail 0 leaf 3 port 37 -> S-r0-p000-s02 port 5": each end as the fabric
// describes its device, lower tier first). A convicted host<->leaf cable is
// a "nic" ("node00007 mlx5_3 <-> rail 3 leaf 0 port 8"): flows cannot tell
// the NIC from its cable, and the reason says so. A node with two or more
// host ports, every one convicted, is a "node" ("node00007"). Each reason
// carries the evidence: the flows, the round they ran in, their Gb/s. An
// ecmp leaf's uplinks are "uplinks" ("rail 0 leaf 3 uplinks").
//
// Usage:
//   auto iso = Isolator::Create(fabric, index, Routing::kFtree);
//   iso->Record(first_pass);             // every flow of the sweep (once or per round)
//   for (auto round = iso->NextRound(); !round.empty(); round = iso->NextRound())
//     iso->Record(RunForReal(round));    // the same flows, each with its outcome
//   Isolation result = iso->Result();
//
// Thread safety: thread-compatible (one caller at a time; const Result()
// from several threads is safe). The Fabric and FabricIndex must outlive the
// Isolator and not change.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "controller/topology/cover.h"
#include "controller/topology/fabric.h"
#include "controller/topology/match.h"
#include "controller/topology/route.h"

namespace gdrbench::controller::topology {

enum class FlowVerdict { kOk, kLow, kFailed };

struct FlowOutcome {
  PlannedFlow flow;  // cables empty: the Isolator takes the known path under its routing
  FlowVerdict verdict = FlowVerdict::kOk;
  double gbps = 0;  // what it read (failed flows: whatever was measured, often 0)
};

// A host port as findings write it: node "node00007", NIC "mlx5_3".
struct HostName {
  std::string node;
  std::string nic;
};
using HostNamer = std::function<HostName(int host)>;

// From each host device's description, split at its first space (the IB
// convention "node00007 mlx5_3"); the device id when it has none.
HostNamer DescriptionNames(const Fabric& fabric, const FabricIndex& index);
// From the inventory match: the rail's node and NIC where a rail claims the
// host device, else DescriptionNames. Copies what it needs.
HostNamer MatchNames(const Match& match, const Fabric& fabric, const FabricIndex& index);

enum class FindingKind { kCable, kNic, kNode, kUplinks };
// "cable", "nic", "node", "uplinks".
const char* FindingKindName(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::kCable;
  std::string subject;      // "rail 0 leaf 3 port 37 -> S-r0-p000-s02 port 5", "node00007", ...
  std::string reason;       // the evidence: flows, rounds, Gb/s
  std::vector<int> cables;  // Fabric::cables indices it names (uplinks: every uplink of the leaf)
};

struct Unresolved {
  std::vector<int> suspects;  // cable indices still suspect (ecmp: the host cables among them)
  std::string why;            // "cannot separate X and Y: no exonerated path isolates them: A -> B read ..."
};

struct Isolation {
  std::vector<Finding> findings;       // convictions in cable order, then nodes, then uplinks
  std::vector<Unresolved> unresolved;  // filled once finished
  int extra_rounds = 0;                // retest rounds recorded
  bool finished = false;               // NextRound returned an empty round and nothing came after
};

class Isolator {
 public:
  // Retest rounds at most; past them, what is left is reported unresolved.
  static constexpr int kMaxRounds = 8;
  // A probe crosses at most this many uncleared cables.
  static constexpr size_t kMaxProbe = 3;

  // INVALID_ARGUMENT when `index` was not built from `fabric` (its cable
  // count or a cable's device differs). `names` defaults to DescriptionNames.
  static absl::StatusOr<Isolator> Create(const Fabric& fabric, const FabricIndex& index, Routing routing,
                                         HostNamer names = nullptr);

  // Adds outcomes: the sweep's flows (in one call or several), then each
  // retest round's. While a round from NextRound is outstanding, the
  // outcomes must be exactly its flows (in any order). INVALID_ARGUMENT,
  // recording nothing, when an outcome's host is out of range, a flow goes
  // from a host to itself, its Gb/s is negative or not a number, a cable
  // index is not in the fabric, its cables are not its known path under the
  // routing (ftree: FtreePath, or no ftree path joins the hosts; ecmp: its
  // two host cables), or the outcomes do not match the outstanding round:
  //   "outcome 2 (node00001 mlx5_0 -> node00009 mlx5_0): hop 2 is cable 41
  //    (rail 0 leaf 1 port 10 -> S-r0-p000-s01 port 3), but ftree routes it on
  //    cable 40 (...)"
  //   "retest round 1: node00001 mlx5_0 -> node00002 mlx5_0 was planned but has no outcome"
  absl::Status Record(absl::Span<const FlowOutcome> outcomes);

  // The next retest round; empty when no retest can tell more, or after
  // kMaxRounds (finished).
  // Asked again before its outcomes are recorded, it returns the same round.
  std::vector<PlannedFlow> NextRound();

  // What the evidence so far shows.
  Isolation Result() const;

 private:
  struct Flow {
    int src = 0, dst = 0;
    std::vector<CableUse> path;  // the known path
    bool complete = true;        // the path is the whole path (ecmp: both hosts on one leaf)
    FlowVerdict verdict = FlowVerdict::kOk;
    double gbps = 0;
    int round = 0;  // 0: the sweep; k: retest round k
  };
  struct Analysis {
    std::vector<int> convicted_by;  // per cable: the flow that convicts it, -1
    std::vector<int> unexplained;   // bad flows without a convicted cable on their path
  };
  struct RoundState;

  Isolator(const Fabric& fabric, const FabricIndex& index, Routing routing);
  void IndexDevices(const HostNamer& names);

  // Evidence.
  bool KnownPath(int s, int d, std::vector<CableUse>& path) const;  // returns `complete`
  absl::Status Parse(const FlowOutcome& o, size_t i, Flow& out) const;
  absl::Status MatchesOutstanding(const std::vector<Flow>& flows) const;
  std::vector<int> Suspects(const Flow& f) const;
  Analysis Analyze() const;

  // Retests.
  std::vector<int> Partners(const Flow& f) const;
  bool Below(int host, int cable) const;
  std::vector<int> Unknowns(int cable, const std::vector<CableUse>& path) const;
  bool Informative(const std::vector<int>& unknowns, const std::vector<char>& doubted) const;
  bool PlaceRetest(int cable, const Flow& f, const std::vector<char>* doubted, RoundState& round) const;

  // Findings.
  std::string HostText(int h) const;
  std::string FlowText(const Flow& f) const;
  std::string Evidence(const Flow& f) const;
  std::string DeviceName(const std::string& id) const;
  std::string DeviceText(const std::string& id, int port) const;
  std::string CableText(int cable) const;
  std::string SuspectsText(const std::vector<int>& cables) const;
  std::string AlsoLow(int cable, int except) const;
  void Convictions(const Analysis& a, Isolation& out) const;
  void Nodes(const Analysis& a, Isolation& out) const;
  std::vector<char> Uplinks(const Analysis& a, Isolation& out) const;
  void Unexplained(const Analysis& a, const std::vector<char>& taken, Isolation& out) const;
  int CommonSwitch(const std::vector<int>& suspects) const;
  void SharedSwitches(std::map<std::vector<int>, std::vector<int>>& groups, Isolation& out) const;

  const Fabric* fabric_;
  const FabricIndex* ix_;
  Routing routing_;
  std::vector<HostName> host_names_;            // per host index
  std::vector<int> pos_;                        // a host's position among its leaf's hosts
  std::vector<int> cable_lower_;                // device index of each cable's lower end
  std::vector<int> host_of_device_;             // host index of a host device, -1
  std::vector<std::vector<int>> above_;         // per leaf device: every switch above it, sorted
  std::vector<std::vector<int>> plane_leaves_;  // per plane (connected part): its leaves in CA order
  std::vector<int> plane_of_;                   // per host: its plane's index in plane_leaves_

  std::vector<Flow> flows_;
  std::vector<int> cleared_by_;           // per cable: the first flow that passed over it, -1
  std::vector<PlannedFlow> outstanding_;  // the round NextRound handed out, not yet recorded
  int rounds_ = 0;                        // retest rounds recorded
  bool finished_ = false;
};

}  // namespace gdrbench::controller::topology
