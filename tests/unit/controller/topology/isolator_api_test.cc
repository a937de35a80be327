// The Isolator's contract with its caller (split from isolate_test.cc): what
// it refuses, and what an ecmp flow carries.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
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

class IsolatorApi : public testing::Test {
 protected:
  void SetUp() override {
    auto f = GenerateFatTree(Small2Tier());
    ASSERT_TRUE(f.ok());
    fabric_ = *std::move(f);
    auto ix = FabricIndex::Build(fabric_);
    ASSERT_TRUE(ix.ok());
    ix_ = std::make_unique<FabricIndex>(*std::move(ix));
  }

  Isolator Make(Routing routing = Routing::kFtree) {
    auto iso = Isolator::Create(fabric_, *ix_, routing);
    EXPECT_TRUE(iso.ok()) << iso.status();
    return *std::move(iso);
  }

  // Host index of node n, rail r.
  int Host(int n, int r) {
    for (int h = 0; h < ix_->hosts(); ++h) {
      if (ix_->HostId(h) == absl::StrFormat("H-n%05d-r%d", n, r)) return h;
    }
    ADD_FAILURE() << "no host " << n << " " << r;
    return 0;
  }

  FlowOutcome Flow(int s, int d, FlowVerdict v = FlowVerdict::kOk, double gbps = 390) {
    return FlowOutcome{PlannedFlow{s, d, {}}, v, gbps};
  }

  std::string RecordError(Isolator& iso, const std::vector<FlowOutcome>& outcomes) {
    return std::string(iso.Record(outcomes).message());
  }

  Fabric fabric_;
  std::unique_ptr<FabricIndex> ix_;
};

TEST_F(IsolatorApi, AnIndexOfAnotherFabricIsRefused) {
  auto other = GenerateFatTree(TwoTierShape(64, 1));
  ASSERT_TRUE(other.ok());
  auto iso = Isolator::Create(*other, *ix_, Routing::kFtree);
  EXPECT_EQ(iso.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(iso.status().message()),
      HasSubstr(
          "the fabric index has 256 cables and the fabric 128: the index was built from another fabric"));
  Fabric renamed = fabric_;
  renamed.cables[7].upper.device = "S-elsewhere";
  iso = Isolator::Create(renamed, *ix_, Routing::kFtree);
  EXPECT_THAT(std::string(iso.status().message()),
              HasSubstr("generated: a cable to S-elsewhere, a device the fabric index does not list"));
}

TEST_F(IsolatorApi, BadOutcomesAreRefusedAndRecordNothing) {
  Isolator iso = Make();
  const int a = Host(1, 0), b = Host(9, 0);
  EXPECT_EQ(RecordError(iso, {Flow(a, 999)}),
            "outcome 0: host 999 is out of range (the fabric has 128 host ports)");
  EXPECT_EQ(RecordError(iso, {Flow(-1, a)}),
            "outcome 0: host -1 is out of range (the fabric has 128 host ports)");
  EXPECT_EQ(RecordError(iso, {Flow(a, b), Flow(a, a)}),
            "outcome 1 (node00001 mlx5_0 -> node00001 mlx5_0): a flow from a host port to itself");
  EXPECT_EQ(RecordError(iso, {Flow(a, b, FlowVerdict::kLow, -3)}),
            "outcome 0 (node00001 mlx5_0 -> node00009 mlx5_0): -3 Gb/s is not a rate");
  EXPECT_THAT(RecordError(iso, {Flow(a, b, FlowVerdict::kLow, std::nan(""))}),
              HasSubstr("Gb/s is not a rate"));
  FlowOutcome far = Flow(a, b);
  far.flow.cables = {static_cast<CableUse>(5000) * 2};
  EXPECT_EQ(RecordError(iso, {far}),
            "outcome 0 (node00001 mlx5_0 -> node00009 mlx5_0): cable 5000 is not in the fabric (it has 256 "
            "cables)");
  FlowOutcome wrong = Flow(a, b);
  wrong.flow.cables = ix_->FtreePath(a, Host(10, 0));  // leaves leaf 0 on uplink 2, not 1
  EXPECT_THAT(
      RecordError(iso, {wrong}),
      testing::MatchesRegex("outcome 0 \\(node00001 mlx5_0 -> node00009 mlx5_0\\): hop 2 is cable [0-9]+ up "
                            "\\(rail 0 leaf 0 port 11 -> S-r0-p000-s01 port 1\\), but ftree routes it on "
                            "cable [0-9]+ up \\(rail 0 leaf 0 port 10 -> S-r0-p000-s00 port 2\\)"));
  EXPECT_EQ(RecordError(iso, {Flow(a, Host(9, 1))}),
            "outcome 0 (node00001 mlx5_0 -> node00009 mlx5_1): no ftree path joins them");
  // Nothing of the refused outcomes was recorded: the low flow a -> b never counted.
  EXPECT_TRUE(iso.NextRound().empty());
  EXPECT_TRUE(iso.Result().findings.empty());
  EXPECT_TRUE(iso.Result().unresolved.empty());
}

TEST_F(IsolatorApi, EcmpFlowsCarryOnlyTheirHostCables) {
  Isolator iso = Make(Routing::kEcmp);
  const int a = Host(1, 0), b = Host(9, 0);
  FlowOutcome full = Flow(a, b);
  full.flow.cables = ix_->FtreePath(a, b);
  EXPECT_THAT(RecordError(iso, {full}), HasSubstr("): hop 2 is cable "));
  EXPECT_THAT(RecordError(iso, {full}), HasSubstr(", but ecmp routes it on cable "));
  FlowOutcome hosts = Flow(a, b);
  hosts.flow.cables = {static_cast<CableUse>(ix_->HostCable(a)) * 2,
                       static_cast<CableUse>(ix_->HostCable(b)) * 2 + 1};
  EXPECT_TRUE(iso.Record({hosts}).ok());
}

TEST_F(IsolatorApi, RetestOutcomesMustBeTheRoundPlanned) {
  Isolator iso = Make();
  auto plan = PlanCover(fabric_, *ix_, CoverOptions{});
  ASSERT_TRUE(plan.ok());
  std::vector<FlowOutcome> sweep;
  for (const PlannedFlow& p : plan->rounds[0]) sweep.push_back(FlowOutcome{p, FlowVerdict::kOk, 390});
  sweep[3].verdict = FlowVerdict::kFailed;  // the only flow across its cables: four suspects
  sweep[3].gbps = 0;
  ASSERT_TRUE(iso.Record(sweep).ok());
  const std::vector<PlannedFlow> round = iso.NextRound();
  ASSERT_FALSE(round.empty());
  EXPECT_EQ(iso.NextRound().size(), round.size());  // asked again: the same round
  std::vector<FlowOutcome> outcomes;
  for (const PlannedFlow& p : round) outcomes.push_back(FlowOutcome{p, FlowVerdict::kOk, 390});
  const PlannedFlow first = round[0];
  outcomes.erase(outcomes.begin());
  const std::string missing = RecordError(iso, outcomes);
  EXPECT_THAT(missing, StartsWith("retest round 1: "));
  EXPECT_THAT(missing, HasSubstr(" was planned but has no outcome"));
  outcomes.push_back(FlowOutcome{first, FlowVerdict::kOk, 390});
  outcomes.push_back(Flow(Host(2, 0), Host(3, 0)));
  EXPECT_EQ(RecordError(iso, outcomes),
            "retest round 1: node00002 mlx5_0 -> node00003 mlx5_0 has an outcome but was not planned");
  outcomes.pop_back();
  EXPECT_TRUE(iso.Record(outcomes).ok());
  EXPECT_EQ(iso.Result().extra_rounds, 1);
}

TEST_F(IsolatorApi, ABadFlowOverCablesThatPassedIsNoCablesFault) {
  Isolator iso = Make();
  const int a = Host(1, 0), b = Host(9, 0);
  ASSERT_TRUE(iso.Record({Flow(a, b), Flow(a, b, FlowVerdict::kLow, 120)}).ok());
  EXPECT_FALSE(iso.Result().finished);
  EXPECT_TRUE(iso.NextRound().empty());
  const Isolation r = iso.Result();
  EXPECT_TRUE(r.finished);
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.unresolved.size(), 1u);
  EXPECT_EQ(
      r.unresolved[0].why,
      "every cable of its path carried a flow that passed, so no cable explains it (the hosts' PCIe or GPU, "
      "a "
      "transient, or routing other than the one assumed): node00001 mlx5_0 -> node00009 mlx5_0 read 120.0 "
      "Gb/s (low) in the sweep");
}

TEST_F(IsolatorApi, FindingsUseTheInventorysNamesWhenGiven) {
  Match match;
  RailPort rail;
  rail.node = "gpu07";
  rail.rail = 3;
  rail.nic = "mlx5_3";
  rail.port = PortRef{"H-n00005-r1", 1};
  rail.found = true;
  match.rails.push_back(rail);
  HostNamer names = MatchNames(match, fabric_, *ix_);
  EXPECT_EQ(names(Host(5, 1)).node, "gpu07");
  EXPECT_EQ(names(Host(5, 0)).node, "node00005");
  auto iso = Isolator::Create(fabric_, *ix_, Routing::kFtree, names);
  ASSERT_TRUE(iso.ok());
  const int h = Host(5, 1), mate = Host(6, 1);
  // h -> mate crosses h's cable and mate's; mate's passed, so h's is the one.
  ASSERT_TRUE(iso->Record({Flow(mate, Host(7, 1)), Flow(h, mate, FlowVerdict::kLow, 50)}).ok());
  const Isolation r = iso->Result();
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].subject, "gpu07 mlx5_3 <-> rail 1 leaf 0 port 6");
  EXPECT_EQ(
      r.findings[0].reason,
      "the NIC or its cable (flows cannot tell them apart): gpu07 mlx5_3 -> node00006 mlx5_1 read 50.0 Gb/s "
      "(low) in the sweep, and every other cable of its path carried a flow that passed");
}

}  // namespace
}  // namespace gdrbench::controller::topology
