// The isolation engine on generated fat trees (controller/topology/fat_tree.h)
// against a simulated fabric: one cable is bad, a flow is low iff the path
// the fabric routes it on crosses that cable (ftree: FabricIndex::FtreePath;
// ecmp: a hash picks the uplink here, in the test). The cover plan runs,
// then every retest round the Isolator asks for, until it has nothing left
// to ask. Each retest round is checked by a counter written here: no host
// port in two flows, no cable direction carrying two flows (ftree), every
// flow's cables a walk from its source host to its destination, and every
// cable but one of each retest already crossed by a flow that passed (a
// probe: all but two or three).
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "controller/topology/cover.h"
#include "controller/topology/fat_tree.h"
#include "controller/topology/isolate.h"
#include "controller/topology/route.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/topology/small_fabrics.h"

namespace gdrbench::controller::topology {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

int FindCable(const Fabric& f, const std::string& lower, int port) {
  for (size_t i = 0; i < f.cables.size(); ++i) {
    if (f.cables[i].lower.device == lower && f.cables[i].lower.port == port) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no cable from " << lower << " port " << port;
  return -1;
}

// The fabric as the test simulates it.
class SimFabric {
 public:
  SimFabric(const Fabric& f, const FabricIndex& ix, Routing routing, std::set<int> bad)
      : f_(f), ix_(ix), routing_(routing), bad_(std::move(bad)) {
    for (size_t i = 0; i < f.cables.size(); ++i) {
      if (f.cables[i].tier == 1)
        between_[{f.cables[i].upper.device, f.cables[i].lower.device}].push_back(static_cast<int>(i));
    }
  }

  // The cables the flow really crosses: ftree's path, or (ecmp, 2 tiers) a
  // hashed uplink of the source leaf and a hashed cable down from its spine.
  std::vector<int> Route(int s, int d) const {
    std::vector<int> out;
    if (routing_ == Routing::kFtree) {
      for (CableUse u : ix_.FtreePath(s, d)) out.push_back(static_cast<int>(CableOf(u)));
      return out;
    }
    out = {ix_.HostCable(s), ix_.HostCable(d)};
    if (ix_.LeafOf(s) == ix_.LeafOf(d)) return out;
    uint64_t hash = static_cast<uint64_t>(s) * 1000003 + static_cast<uint64_t>(d);  // murmur3's finalizer
    hash = (hash ^ (hash >> 33)) * 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    const auto& up = ix_.Up(ix_.LeafOf(s));
    const int climb = up[hash % up.size()];
    const auto& down = between_.at({f_.cables[climb].upper.device, ix_.DeviceId(ix_.LeafOf(d))});
    out.push_back(climb);
    out.push_back(down[(hash / 7) % down.size()]);
    return out;
  }

  FlowOutcome Run(const PlannedFlow& p) const {
    bool low = false;
    for (int c : Route(p.src, p.dst)) low = low || bad_.count(c) > 0;
    return FlowOutcome{p, low ? FlowVerdict::kLow : FlowVerdict::kOk, low ? 118.5 : 391.0};
  }

 private:
  const Fabric& f_;
  const FabricIndex& ix_;
  Routing routing_;
  std::set<int> bad_;
  std::map<std::pair<std::string, std::string>, std::vector<int>> between_;  // (spine, leaf) -> cables
};

struct Outcome {
  Isolation result;
  int rounds = 0;             // retest rounds counted here
  int probes = 0;             // retests with more than one cable no passing flow crossed
  std::string first_problem;  // from the independent round check
};

// The test's own check of one retest round; `passed` is every cable a flow
// that passed has crossed so far.
std::string CheckRound(const Fabric& f, const FabricIndex& ix, Routing routing,
                       const std::vector<PlannedFlow>& round, const std::set<int>& passed, int& probes) {
  std::set<int> hosts;
  std::set<CableUse> directions;
  for (const PlannedFlow& flow : round) {
    if (!hosts.insert(flow.src).second || !hosts.insert(flow.dst).second) return "a host port in two retests";
    std::string at = ix.HostId(flow.src);
    int unproven = 0;
    for (CableUse u : flow.cables) {
      if (routing == Routing::kFtree && !directions.insert(u).second)
        return "a cable direction in two retests";
      const Cable& c = f.cables[CableOf(u)];
      const bool down = Downward(u);
      if ((down ? c.upper.device : c.lower.device) != at) return "a retest whose cables are not a walk";
      at = down ? c.lower.device : c.upper.device;
      unproven += passed.count(static_cast<int>(CableOf(u))) ? 0 : 1;
    }
    if (at != ix.HostId(flow.dst)) return "a retest that does not end at its destination";
    if (unproven < 1 || unproven > static_cast<int>(Isolator::kMaxProbe)) {
      return "a retest with " + std::to_string(unproven) + " cables no passing flow crossed";
    }
    probes += unproven > 1 ? 1 : 0;
  }
  return "";
}

// Every finding and unresolved entry, for failure messages.
std::string Subjects(const Isolation& r) {
  std::string out;
  for (const Finding& f : r.findings)
    out += std::string(FindingKindName(f.kind)) + ": " + f.subject + " (" + f.reason + ")\n";
  for (const Unresolved& u : r.unresolved) out += "unresolved: " + u.why + "\n";
  return out;
}

Outcome Isolate(const Fabric& f, const FabricIndex& ix, Routing routing, const std::set<int>& bad) {
  CoverOptions options;
  options.routing = routing;
  auto plan = PlanCover(f, ix, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->uncovered.empty());
  SimFabric sim(f, ix, routing, bad);
  std::set<int> passed;
  auto run = [&](const std::vector<PlannedFlow>& flows) {
    std::vector<FlowOutcome> out;
    for (const PlannedFlow& p : flows) {
      out.push_back(sim.Run(p));
      if (out.back().verdict != FlowVerdict::kOk) continue;
      for (CableUse u : p.cables) passed.insert(static_cast<int>(CableOf(u)));
    }
    return out;
  };
  auto iso = Isolator::Create(f, ix, routing);
  EXPECT_TRUE(iso.ok()) << iso.status();
  std::vector<PlannedFlow> first;
  for (const auto& round : plan->rounds) first.insert(first.end(), round.begin(), round.end());
  EXPECT_TRUE(iso->Record(run(first)).ok());
  Outcome out;
  for (auto round = iso->NextRound(); !round.empty() && out.rounds < 20; round = iso->NextRound()) {
    ++out.rounds;
    const std::string problem = CheckRound(f, ix, routing, round, passed, out.probes);
    if (out.first_problem.empty()) out.first_problem = problem;
    const absl::Status st = iso->Record(run(round));
    EXPECT_TRUE(st.ok()) << st;
  }
  out.result = iso->Result();
  return out;
}

struct Case {
  std::string lower;
  int port;
  FindingKind kind;
  std::string subject;
};

void ExpectNamed(const FatTreeShape& shape, const Case& c, int max_rounds) {
  SCOPED_TRACE(c.subject);
  auto f = GenerateFatTree(shape);
  ASSERT_TRUE(f.ok()) << f.status();
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok()) << ix.status();
  const Outcome out = Isolate(*f, *ix, Routing::kFtree, {FindCable(*f, c.lower, c.port)});
  EXPECT_EQ(out.first_problem, "");
  EXPECT_TRUE(out.result.finished);
  EXPECT_EQ(out.result.extra_rounds, out.rounds);
  EXPECT_GE(out.rounds, 1);
  EXPECT_LE(out.rounds, max_rounds);
  EXPECT_EQ(out.probes, 0);  // one fault: every suspect has a retest that isolates it
  ASSERT_EQ(out.result.findings.size(), 1u) << Subjects(out.result);
  EXPECT_EQ(out.result.findings[0].kind, c.kind);
  EXPECT_EQ(out.result.findings[0].subject, c.subject);
  EXPECT_THAT(out.result.findings[0].reason, HasSubstr("118.5 Gb/s (low)"));
  EXPECT_TRUE(out.result.unresolved.empty()) << Subjects(out.result);
}

// Bound: a bad flow's suspects are at most one cable per hop. In these
// shapes every suspect of a 2-tier path has an isolating retest in the
// first round; in 3 tiers with 4 pods, the two spine<->core suspects may
// want the same third pod's descent, so one waits a round: at most 2.
TEST(Isolator, TwoTiersOneBadCableOfEachTierIsNamedInOneRound) {
  const Case cases[] = {
      {"H-n00005-r1", 1, FindingKind::kNic, "node00005 mlx5_1 <-> rail 1 leaf 0 port 6"},
      // leaf 3 of rail 0, uplink 5: its spine 5 / 2 = 2, which numbers leaf 3's second cable 3 * 2 + 2.
      {"S-r0-l0003", 8 + 5 + 1, FindingKind::kCable, "rail 0 leaf 3 port 14 -> S-r0-p000-s02 port 8"},
  };
  for (const Case& c : cases) ExpectNamed(Small2Tier(), c, 1);
}

TEST(Isolator, ThreeTiersOneBadCableOfEachTierIsNamedInAtMostTwoRounds) {
  const Case cases[] = {
      {"H-n00037-r0", 1, FindingKind::kNic, "node00037 mlx5_0 <-> rail 0 leaf 9 port 2"},
      {"S-r1-l0006", 4 + 2 + 1, FindingKind::kCable, "rail 1 leaf 6 port 7 -> S-r1-p001-s02 port 3"},
      // spine 2 of pod 1, uplink 3: core 3 / 2 = 1 of group 2, its port 1 * 2 + 1 + 1.
      {"S-r0-p001-s02", 4 + 3 + 1, FindingKind::kCable, "S-r0-p001-s02 port 8 -> S-r0-g02-c01 port 4"},
  };
  for (const Case& c : cases) ExpectNamed(Small3Tier(), c, 2);
}

// The reference architecture's 2-tier shape at full size: 1,024 nodes x 8
// rails, 32 hosts and 32 uplinks per leaf (about 0.2 s a case).
TEST(Isolator, At1024NodesBy8RailsOneBadCableIsNamedInOneRound) {
  const Case cases[] = {
      {"H-n00042-r3", 1, FindingKind::kNic, "node00042 mlx5_3 <-> rail 3 leaf 1 port 11"},
      // leaf 20 of rail 5, uplink 3: spine 3 / 2 = 1, which numbers leaf 20's second cable 20 * 2 + 2.
      {"S-r5-l0020", 32 + 3 + 1, FindingKind::kCable, "rail 5 leaf 20 port 36 -> S-r5-p000-s01 port 42"},
  };
  for (const Case& c : cases) ExpectNamed(TwoTierShape(1024, 8), c, 1);
}

// Several faults at once: many retests share partners and spines, so the
// round check (no host port twice, no cable direction twice) is exercised.
TEST(Isolator, SeveralBadCablesAtOnceAreEachNamed) {
  auto f = GenerateFatTree(Small3Tier());
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Case cases[] = {
      {"H-n00002-r0", 1, FindingKind::kNic, "node00002 mlx5_0 <-> rail 0 leaf 0 port 3"},
      {"S-r0-l0005", 4 + 1 + 1, FindingKind::kCable, "rail 0 leaf 5 port 6 -> S-r0-p001-s01 port 2"},
      {"S-r0-l0010", 4 + 3 + 1, FindingKind::kCable, "rail 0 leaf 10 port 8 -> S-r0-p002-s03 port 3"},
      {"S-r0-p003-s00", 4 + 0 + 1, FindingKind::kCable, "S-r0-p003-s00 port 5 -> S-r0-g00-c00 port 7"},
      {"S-r1-p000-s03", 4 + 2 + 1, FindingKind::kCable, "S-r1-p000-s03 port 7 -> S-r1-g03-c01 port 1"},
  };
  std::set<int> bad;
  for (const Case& c : cases) bad.insert(FindCable(*f, c.lower, c.port));
  const Outcome out = Isolate(*f, *ix, Routing::kFtree, bad);
  EXPECT_EQ(out.first_problem, "");
  EXPECT_TRUE(out.result.finished);
  EXPECT_EQ(out.result.extra_rounds, out.rounds);
  EXPECT_LE(out.rounds, 3);
  std::set<std::string> named;
  for (const Finding& finding : out.result.findings) named.insert(finding.subject);
  std::set<std::string> want;
  for (const Case& c : cases) want.insert(c.subject);
  EXPECT_EQ(named, want) << Subjects(out.result);
  EXPECT_TRUE(out.result.unresolved.empty()) << Subjects(out.result);
}

// Random sets of bad cables: whatever is named is bad (a flow is low only
// across a bad cable, so a low flow whose other cables all carried a
// passing flow points at a bad one), and every round passes the round check.
TEST(Isolator, RandomFaultsNeverBlameAGoodCable) {
  auto f = GenerateFatTree(Small3Tier());
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  std::mt19937 rng(28);
  int named_total = 0;
  for (int trial = 0; trial < 60; ++trial) {
    SCOPED_TRACE(trial);
    std::set<int> bad;
    const int faults = 1 + static_cast<int>(rng() % 6);
    while (static_cast<int>(bad.size()) < faults) bad.insert(static_cast<int>(rng() % f->cables.size()));
    const Outcome out = Isolate(*f, *ix, Routing::kFtree, bad);
    EXPECT_EQ(out.first_problem, "");
    EXPECT_TRUE(out.result.finished);
    EXPECT_EQ(out.result.extra_rounds, out.rounds);
    for (const Finding& finding : out.result.findings) {
      for (int c : finding.cables) EXPECT_TRUE(bad.count(c)) << finding.subject << " is good";
      named_total += static_cast<int>(finding.cables.size());
    }
  }
  EXPECT_GT(named_total, 60);  // most faults are named, not only left unresolved
}

// A dead spine at 4,096 nodes (4 pods): every flow across it is low, so
// none of its cables is ever cleared and its leaf and core cables cannot be
// told apart; the cover's partners on the far side are cleared by probes,
// and faults elsewhere are still named exactly.
TEST(Isolator, ADeadSpineIsLeftUnresolvedAndBlamesNoGoodCable) {
  auto f = GenerateFatTree(ThreeTierShape(4096, 1));
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const std::string dead = "S-r0-p001-s05";
  std::set<int> bad;
  for (size_t i = 0; i < f->cables.size(); ++i) {
    if (f->cables[i].upper.device == dead || f->cables[i].lower.device == dead)
      bad.insert(static_cast<int>(i));
  }
  bad.insert(FindCable(*f, "H-n00042-r0", 1));
  bad.insert(FindCable(*f, "S-r0-l0100", 32 + 3 + 1));
  const Outcome out = Isolate(*f, *ix, Routing::kFtree, bad);
  EXPECT_EQ(out.first_problem, "");
  EXPECT_TRUE(out.result.finished);
  EXPECT_LE(out.rounds, Isolator::kMaxRounds);
  std::set<std::string> named;
  for (const Finding& finding : out.result.findings) named.insert(finding.subject);
  EXPECT_EQ(named, (std::set<std::string>{"node00042 mlx5_0 <-> rail 0 leaf 1 port 11",
                                          "rail 0 leaf 100 port 36 -> S-r0-p003-s03 port 5"}));
  // Reported once, as the switch: its 32 leaf cables and 32 core cables.
  ASSERT_EQ(out.result.unresolved.size(), 1u) << Subjects(out.result);
  const Unresolved& u = out.result.unresolved[0];
  EXPECT_THAT(
      u.why,
      StartsWith("cannot separate the 64 cables of S-r0-p001-s05 that bad flows crossed: no flow across "
                 "any of them passed, so the switch itself is suspect: rail 0 leaf 32 port 38 -> "
                 "S-r0-p001-s05 port 1; "));
  for (int c : u.suspects) EXPECT_TRUE(bad.count(c)) << f->cables[c].where;
}

TEST(Isolator, ACleanFabricNamesNothingInNoRounds) {
  for (const FatTreeShape& shape : {Small2Tier(), Small3Tier()}) {
    auto f = GenerateFatTree(shape);
    ASSERT_TRUE(f.ok());
    auto ix = FabricIndex::Build(*f);
    ASSERT_TRUE(ix.ok());
    const Outcome out = Isolate(*f, *ix, Routing::kFtree, {});
    EXPECT_EQ(out.rounds, 0);
    EXPECT_EQ(out.result.extra_rounds, 0);
    EXPECT_TRUE(out.result.finished);
    EXPECT_TRUE(out.result.findings.empty());
    EXPECT_TRUE(out.result.unresolved.empty());
  }
}

TEST(Isolator, ANodeWithEveryRailBadIsNamedAsTheNode) {
  auto f = GenerateFatTree(Small2Tier());
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Outcome out =
      Isolate(*f, *ix, Routing::kFtree, {FindCable(*f, "H-n00013-r0", 1), FindCable(*f, "H-n00013-r1", 1)});
  EXPECT_EQ(out.first_problem, "");
  EXPECT_EQ(out.result.extra_rounds, 1);
  ASSERT_EQ(out.result.findings.size(), 1u);
  EXPECT_EQ(out.result.findings[0].kind, FindingKind::kNode);
  EXPECT_EQ(out.result.findings[0].subject, "node00013");
  EXPECT_THAT(out.result.findings[0].reason,
              StartsWith("every one of its 2 host ports is low on its own: mlx5_0: "));
  EXPECT_EQ(out.result.findings[0].cables.size(), 2u);
}

TEST(Isolator, OneRailOfANodeIsTheNicOrItsCableNotTheNode) {
  auto f = GenerateFatTree(Small2Tier());
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Outcome out = Isolate(*f, *ix, Routing::kFtree, {FindCable(*f, "H-n00013-r0", 1)});
  ASSERT_EQ(out.result.findings.size(), 1u);
  EXPECT_EQ(out.result.findings[0].kind, FindingKind::kNic);
  EXPECT_EQ(std::string(FindingKindName(out.result.findings[0].kind)), "nic");
  EXPECT_THAT(out.result.findings[0].reason,
              StartsWith("the NIC or its cable (flows cannot tell them apart): "));
}

// Two leaves per rail: uplink u of leaf 0 and uplink u of leaf 1 reach the
// same spine, and every ftree flow that crosses one crosses the other.
TEST(Isolator, TwoCablesNoPathSeparatesAreReportedUnresolved) {
  auto f = GenerateFatTree(TwoTierShape(64, 1));
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Outcome out = Isolate(*f, *ix, Routing::kFtree, {FindCable(*f, "S-r0-l0000", 32 + 5 + 1)});
  EXPECT_EQ(out.first_problem, "");
  EXPECT_TRUE(out.result.finished);
  EXPECT_TRUE(out.result.findings.empty());
  ASSERT_EQ(out.result.unresolved.size(), 1u);
  EXPECT_THAT(
      out.result.unresolved[0].why,
      StartsWith("cannot separate rail 0 leaf 0 port 38 -> S-r0-p000-s02 port 2 and rail 0 leaf 1 port 38 -> "
                 "S-r0-p000-s02 port 4: no exonerated path isolates them: "));
  EXPECT_EQ(out.result.unresolved[0].suspects.size(), 2u);
}

TEST(Isolator, EcmpNamesALeafsUplinksAsAGroup) {
  FatTreeShape shape = Small2Tier();
  shape.rails = 1;
  auto f = GenerateFatTree(shape);
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Outcome out = Isolate(*f, *ix, Routing::kEcmp, {FindCable(*f, "S-r0-l0003", 8 + 5 + 1)});
  EXPECT_EQ(out.first_problem, "");
  EXPECT_LE(out.rounds, 1);
  ASSERT_EQ(out.result.findings.size(), 1u) << Subjects(out.result);
  EXPECT_EQ(out.result.findings[0].kind, FindingKind::kUplinks);
  EXPECT_EQ(out.result.findings[0].subject, "rail 0 leaf 3 uplinks");
  EXPECT_THAT(
      out.result.findings[0].reason,
      StartsWith("under ecmp the switches spread flows by hash, so no path singles out one uplink; "));
  EXPECT_EQ(out.result.findings[0].cables.size(), 8u);
}

TEST(Isolator, EcmpNamesABadHostCableByRetestsWithinItsLeaf) {
  FatTreeShape shape = Small2Tier();
  shape.rails = 1;
  auto f = GenerateFatTree(shape);
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  const Outcome out = Isolate(*f, *ix, Routing::kEcmp, {FindCable(*f, "H-n00042-r0", 1)});
  EXPECT_EQ(out.first_problem, "");
  EXPECT_EQ(out.rounds, 1);
  ASSERT_EQ(out.result.findings.size(), 1u);
  EXPECT_EQ(out.result.findings[0].subject, "node00042 mlx5_0 <-> rail 0 leaf 5 port 3");
  EXPECT_THAT(out.result.findings[0].reason, HasSubstr("in retest round 1"));
}

}  // namespace
}  // namespace gdrbench::controller::topology
