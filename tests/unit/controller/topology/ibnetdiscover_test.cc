// The fabric model read from ibnetdiscover output: a dump kept by another
// project (tests/testdata/topology/README.md: SuperBench's test data, 10
// ConnectX-6 hosts on 5 MQM8700 leaves, two CS8500 line cards, one spine
// card and an SHArP aggregation node), and the error paths on lines written
// in ibnetdiscover(8)'s record syntax.
#include <string>

#include "controller/topology/fabric.h"
#include "controller/topology/ibnetdiscover.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::topology {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

const std::string kDump = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/topology/superbench-ibnetdiscover.txt";

TEST(Ibnetdiscover, ThePublishedDumpIsAThreeTierTree) {
  auto f = LoadIbnetdiscover(kDump);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->CountDevices(DeviceKind::kSwitch), 8u);
  // 10 HCAs with records, plus the aggregation node only a switch names.
  EXPECT_EQ(f->CountDevices(DeviceKind::kHost), 11u);
  EXPECT_THAT(f->unrecorded_peers, ElementsAre("H-0ff08c43213b3f38"));
  // Each cable once: 10 host<->leaf, 5 leaf<->line card, 2 line card<->spine card; the cable
  // to the aggregation node has no tier (its far end has no record).
  EXPECT_THAT(f->CablesPerTier(), ElementsAre(10u, 5u, 2u));
  EXPECT_EQ(f->cables.size(), 18u);
  const Device& leaf = f->devices.at("S-0ff08c43215bae48");
  EXPECT_EQ(leaf.tier, 1);
  EXPECT_EQ(leaf.guid, "0x0ff08c43215bae48");
  EXPECT_EQ(leaf.description, "MF0;rmd70-0101-0919-01ib0:MQM8700/U1");
  EXPECT_EQ(f->devices.at("S-0ff08c432172aa1a").tier, 2);  // L01
  EXPECT_EQ(f->devices.at("S-0ff08c43213b3f30").tier, 3);  // S01
  const Device& host = f->devices.at("H-0ff08c4321664e96");
  EXPECT_EQ(host.tier, 0);
  EXPECT_EQ(host.description, "RMD701091901003 ibp11s0f0");
  EXPECT_EQ(host.guid, "0x0ff08c4321664e96");
  EXPECT_EQ(host.port_guid, "0x0ff08c4321664e96");  // the Ca line's [1](ff08c4321664e96)
  EXPECT_THAT(host.where, HasSubstr("superbench-ibnetdiscover.txt:"));
}

TEST(Ibnetdiscover, EveryCableHasItsEndsInTierOrderAndItsRate) {
  auto f = LoadIbnetdiscover(kDump);
  ASSERT_TRUE(f.ok()) << f.status();
  for (const Cable& c : f->cables) {
    if (c.tier < 0) continue;
    EXPECT_EQ(f->devices.at(c.lower.device).tier, c.tier) << c.where;
    EXPECT_EQ(f->devices.at(c.upper.device).tier, c.tier + 1) << c.where;
    EXPECT_EQ(c.link, "4xHDR") << c.where;
    EXPECT_EQ(c.gbps, 200) << c.where;
  }
  // The first host's cable: its HCA port 1 to port 1 of leaf MQM8700 01.
  bool found = false;
  for (const Cable& c : f->cables) {
    if (c.lower == PortRef{"H-0ff08c4321664e96", 1}) {
      found = true;
      EXPECT_EQ(c.upper, (PortRef{"S-0ff08c43215bae48", 1}));
    }
  }
  EXPECT_TRUE(found);
}

TEST(Ibnetdiscover, LinkRatesByWidthAndSpeed) {
  EXPECT_EQ(LinkGbps("4xHDR"), 200);
  EXPECT_EQ(LinkGbps("1xNDR"), 100);
  EXPECT_EQ(LinkGbps("4xNDR"), 400);
  EXPECT_EQ(LinkGbps("4xEDR"), 100);
  EXPECT_EQ(LinkGbps("4xFDR10"), 40);
  EXPECT_EQ(LinkGbps("4xQDR"), 40);
  EXPECT_EQ(LinkGbps("HDR"), 0);
  EXPECT_EQ(LinkGbps("4xZZZ"), 0);
  EXPECT_EQ(LinkGbps("0xHDR"), 0);
}

constexpr char kSwitch[] =
    "switchguid=0xff08c43215bae48(ff08c43215bae48)\n"
    "Switch  41 \"S-0ff08c43215bae48\"  # \"leaf1\" enhanced port 0 lid 556 lmc 0\n";

TEST(Ibnetdiscover, ErrorsNameTheFileLineAndWhat) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"[1]  \"S-0ff08c43215bae48\"[1]  # \"x\" lid 1 4xHDR\n", "f.txt:1: port line outside a Switch or Ca record"},
      {std::string(kSwitch) + "[1] H-01[1] # lid 1\n", "f.txt:3: neither a record header, a port line"},
      {std::string(kSwitch) + kSwitch, "f.txt:4: S-0ff08c43215bae48 has a second record (the first at f.txt:2)"},
      {std::string(kSwitch) + "[1]  \"H-01\"[1](01)  # \"h1 mlx5_0\" lid 2 4xHDR\n" +
           "[1]  \"H-02\"[1](02)  # \"h2 mlx5_0\" lid 3 4xHDR\n",
       "f.txt:4: S-0ff08c43215bae48[1] is listed twice (first at f.txt:3)"},
      {std::string(kSwitch) + "[1]  \"H-01\"[1](01)  # \"h1 mlx5_0\" lid 2 4xHDR\n" +
           "caguid=0x01\nCa  1 \"H-01\"  # \"h1 mlx5_0\"\n[1](01)  \"S-0ff08c43215bae48\"[7]  # lid 2 lmc 0 \"leaf1\" lid 556 4xHDR\n",
       "f.txt:6: H-01[1] says its peer is S-0ff08c43215bae48[7], but S-0ff08c43215bae48[1] (f.txt:3) says H-01[1] "
       "is its peer"},
      {"switchguid=ff08(ff08)\n", "f.txt:1: a GUID is written 0x..., got 'ff08(ff08)'"},
      {"# nothing\n\n", "f.txt: no Switch or Ca record: not ibnetdiscover output"},
  };
  for (const auto& c : cases) {
    auto f = ParseIbnetdiscover(c.text, "f.txt");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(f.status().message()), HasSubstr(c.want)) << c.text;
  }
  EXPECT_EQ(LoadIbnetdiscover("/nonexistent/fabric.txt").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gdrbench::controller::topology
