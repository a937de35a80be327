// Cover plans on rail-optimized fat trees generated from the DGX SuperPOD
// reference architecture's shape (controller/topology/fat_tree.h), checked
// by a coverage counter written here from the Fabric alone: every flow's
// cables are a path from its source host's cable to its destination's, up
// then down, leaving each leaf on uplink (destination position mod
// uplinks) as ftree does; no NIC in two flows of a round, no cable direction
// with two flows in a round, every cable carries a flow, and the rounds are
// within 2x of the lower bound.
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "controller/topology/cover.h"
#include "controller/topology/fat_tree.h"
#include "controller/topology/route.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::topology {
namespace {

struct Counted {
  size_t cables = 0, covered = 0;
  std::string first_problem;
};

// The independent counter. `uplinks` is a leaf's uplink count (its ports
// hosts_per_leaf + 1 .. are uplinks, in order).
Counted Count(const Fabric& f, const FabricIndex& ix, const CoverPlan& plan, int hosts_per_leaf) {
  Counted out;
  std::vector<int> flows(f.cables.size(), 0);
  auto problem = [&](const std::string& p) {
    if (out.first_problem.empty()) out.first_problem = p;
  };
  for (size_t r = 0; r < plan.rounds.size(); ++r) {
    std::set<std::string> nics;
    std::set<uint32_t> directions;
    for (const PlannedFlow& flow : plan.rounds[r]) {
      const std::string src = ix.HostId(flow.src), dst = ix.HostId(flow.dst);
      if (!nics.insert(src).second || !nics.insert(dst).second) problem("a NIC in two flows of round " + std::to_string(r));
      if (flow.cables.size() < 2) {
        problem("a flow with fewer than two cables");
        continue;
      }
      // Walk: start at the source host, each cable must touch the current device.
      std::string at = src;
      bool down = false;
      for (size_t i = 0; i < flow.cables.size(); ++i) {
        const uint32_t u = flow.cables[i];
        const Cable& c = f.cables[u >> 1];
        const bool going_down = (u & 1) != 0;
        if (!directions.insert(u).second) problem("two flows on one cable direction in round " + std::to_string(r));
        if (going_down && !down) down = true;
        if (!going_down && down) problem("a path that climbs after descending");
        const std::string& from = going_down ? c.upper.device : c.lower.device;
        const std::string& to = going_down ? c.lower.device : c.upper.device;
        if (from != at) problem("a path whose cable does not start where the last one ended: " + c.where);
        // ftree: a leaf is left upward on uplink (position of dst in its leaf) mod uplinks.
        if (!going_down && c.tier == 1) {
          const int pos = f.cables[flow.cables.back() >> 1].upper.port - 1;
          if (c.lower.port != hosts_per_leaf + pos % hosts_per_leaf + 1) problem("a leaf left on another uplink");
        }
        ++flows[u >> 1];
        at = to;
      }
      if (at != dst) problem("a path that does not end at its destination");
    }
  }
  for (size_t i = 0; i < f.cables.size(); ++i) {
    ++out.cables;
    if (flows[i] > 0) ++out.covered;
  }
  return out;
}

void ExpectCovered(const FatTreeShape& shape, size_t want_cables) {
  auto f = GenerateFatTree(shape);
  ASSERT_TRUE(f.ok()) << f.status();
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok()) << ix.status();
  auto plan = PlanCover(*f, *ix, CoverOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Counted c = Count(*f, *ix, *plan, shape.hosts_per_leaf);
  EXPECT_EQ(c.first_problem, "");
  EXPECT_EQ(c.cables, want_cables);
  EXPECT_EQ(c.covered, c.cables);
  EXPECT_TRUE(plan->uncovered.empty());
  // Every leaf's 32 uplinks / 32 hosts, every spine's uplinks / its hosts: 1 round at least.
  EXPECT_EQ(plan->lower_bound, 1);
  EXPECT_GE(static_cast<int>(plan->rounds.size()), plan->lower_bound);
  EXPECT_LE(static_cast<int>(plan->rounds.size()), 2 * plan->lower_bound);
  for (const TierCoverage& t : plan->tiers) EXPECT_EQ(t.covered, t.total);
}

TEST(CoverPlan, TwoTier1024NodesBy8RailsEveryCableInOneRound) {
  // 8,192 host cables and 8,192 leaf-spine cables (2 x 16 per leaf).
  ExpectCovered(TwoTierShape(1024, 8), 8192u * 2);
}

TEST(CoverPlan, ThreeTier10240NodesBy8Rails) {
  // 81,920 cables per tier, as the RA's one-cable-per-GPU-per-tier rule.
  ExpectCovered(ThreeTierShape(10240, 8), 81920u * 3);
}

TEST(CoverPlan, AnOddLeafCountTakesASecondRound) {
  FatTreeShape s = TwoTierShape(96, 2);  // 3 leaves per rail
  ExpectCovered(s, 96u * 2 * 2);
}

TEST(CoverPlan, EcmpPrintsTheOddsItReached) {
  auto f = GenerateFatTree(ThreeTierShape(2048, 1));
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  CoverOptions o;
  o.routing = Routing::kEcmp;
  o.ecmp_confidence = 0.999;
  auto plan = PlanCover(*f, *ix, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 32 flows spread by hash over 32 uplinks per round: an uplink misses a round with
  // (31/32)^32 = 0.362; 0.999 needs ceil(log(0.001) / log(0.362)) = 7 rounds.
  EXPECT_EQ(plan->rounds.size(), 7u);
  EXPECT_GE(plan->ecmp_min_probability, 0.999);
  EXPECT_NEAR(plan->tiers[1].expected_per_round, 1.0, 1e-9);  // 32 flows / 32 uplinks
  for (const auto& round : plan->rounds) {
    for (const PlannedFlow& flow : round) EXPECT_EQ(flow.cables.size(), 2u);  // only the host cables are known
  }
}

TEST(CoverPlan, ShiftRunsEveryLeafPairOfEachPlane) {
  auto f = GenerateFatTree(TwoTierShape(256, 2));  // 8 leaves per rail
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  auto plan = PlanShift(*f, *ix);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rounds.size(), 14u);  // (8 - 1) shifts, each in a send half and a receive half
  std::set<std::pair<std::string, std::string>> leaf_pairs;
  for (const auto& round : plan->rounds) {
    for (const PlannedFlow& flow : round) {
      leaf_pairs.emplace(ix->DeviceId(ix->LeafOf(flow.src)), ix->DeviceId(ix->LeafOf(flow.dst)));
    }
  }
  EXPECT_EQ(leaf_pairs.size(), 2u * 8 * 7);  // every ordered pair of different leaves, per rail
  EXPECT_EQ(Count(*f, *ix, *plan, 32).first_problem, "");
}

TEST(CoverPlan, Errors) {
  auto f = GenerateFatTree(TwoTierShape(64, 1));
  ASSERT_TRUE(f.ok());
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  CoverOptions o;
  o.max_rounds = 0;
  EXPECT_EQ(PlanCover(*f, *ix, o).status().code(), absl::StatusCode::kInvalidArgument);
  o = CoverOptions{};
  o.routing = Routing::kEcmp;
  o.ecmp_confidence = 1;
  EXPECT_EQ(PlanCover(*f, *ix, o).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FabricIndex::Build(Fabric{}).status().code(), absl::StatusCode::kInvalidArgument);
  Fabric dangling = *f;
  dangling.cables[0].upper.device = "S-nowhere";
  EXPECT_THAT(std::string(FabricIndex::Build(dangling).status().message()),
              testing::HasSubstr("generated: a cable to S-nowhere, a device the topology does not list"));
  FatTreeShape bad = TwoTierShape(100, 1);
  EXPECT_THAT(std::string(GenerateFatTree(bad).status().message()), testing::HasSubstr("not whole leaves"));
}

TEST(CoverPlan, ACableNoFlowCanUseIsNamedWithItsReason) {
  // Two leaves of one rail; a third spine cable from leaf 0 to a spine no other leaf reaches.
  auto f = GenerateFatTree(TwoTierShape(64, 1));
  ASSERT_TRUE(f.ok());
  Device lone;
  lone.id = "S-lone";
  lone.tier = 2;
  lone.where = "test";
  f->devices["S-lone"] = lone;
  Cable c;
  c.lower = PortRef{"S-r0-l0000", 99};
  c.upper = PortRef{"S-lone", 1};
  c.tier = 1;
  c.where = "extra";
  f->cables.push_back(c);
  auto ix = FabricIndex::Build(*f);
  ASSERT_TRUE(ix.ok());
  auto plan = PlanCover(*f, *ix, CoverOptions{});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->uncovered.size(), 1u);
  EXPECT_EQ(f->cables[plan->uncovered[0].cable].where, "extra");
  EXPECT_THAT(plan->uncovered[0].why, testing::HasSubstr("no planned flow crosses it under ftree routing"));
  EXPECT_EQ(plan->tiers[1].covered + 1, plan->tiers[1].total);
}

}  // namespace
}  // namespace gdrbench::controller::topology
