// The fabric model read from `iblinkinfo --line` output: four lines captured
// on a real EDR fabric and published in ib2neo4j (tests/testdata/topology/
// README.md), and the error paths on lines written in the same syntax
// (rdma-core's iblinkinfo.c print_port, line mode).
#include <string>

#include "controller/topology/fabric.h"
#include "controller/topology/iblinkinfo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::topology {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

const std::string kCapture =
    std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/topology/ib2neo4j-iblinkinfo-line.txt";

TEST(Iblinkinfo, ThePublishedCaptureIsThreeHostsOnOneSwitch) {
  auto f = LoadIblinkinfo(kCapture);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->CountDevices(DeviceKind::kSwitch), 1u);
  EXPECT_EQ(f->CountDevices(DeviceKind::kHost), 3u);
  // Port 9 of the switch is Down/Polling: no cable.
  EXPECT_THAT(f->CablesPerTier(), ElementsAre(3u));
  const Device& sw = f->devices.at("S-ec0d9a030002b810");
  EXPECT_EQ(sw.description, "SwitchIB Mellanox Technologies");
  EXPECT_EQ(sw.tier, 1);
  const Device& host = f->devices.at("H-248a07030017b128");
  EXPECT_EQ(host.description, "thing4 HCA-1");  // the 30-column padding stripped
  EXPECT_EQ(host.port_guid, "0x248a07030017b128");
  EXPECT_EQ(host.tier, 0);
  EXPECT_THAT(host.where, HasSubstr("ib2neo4j-iblinkinfo-line.txt:1"));
  for (const Cable& c : f->cables) {
    EXPECT_EQ(c.link, "4xEDR") << c.where;  // 4X 25.78125 Gbps
    EXPECT_EQ(c.gbps, 100) << c.where;
    EXPECT_EQ(c.tier, 0) << c.where;
    EXPECT_EQ(c.upper.device, "S-ec0d9a030002b810") << c.where;
  }
  EXPECT_EQ(f->cables[1].lower, (PortRef{"H-ec0d9a03006ed0ca", 1}));
  EXPECT_EQ(f->cables[1].upper, (PortRef{"S-ec0d9a030002b810", 15}));
}

// The switch's own line for a cable a host line listed: one cable, not two.
constexpr char kHostLine[] =
    "0x248a07030017b128 \"                  thing4 HCA-1\"    612    1[  ] ==( 4X      25.78125 Gbps Active/  "
    "LinkUp)==>  0xec0d9a030002b810    496   20[  ] \"SwitchIB Mellanox Technologies\" ( )\n";
constexpr char kSwitchLine[] =
    "0xec0d9a030002b810 \"SwitchIB Mellanox Technologies\"    496   20[  ] ==( 4X      25.78125 Gbps Active/  "
    "LinkUp)==>  0x248a07030017b128    612    1[  ] \"thing4 HCA-1\" ( )\n";

constexpr char kSwitchDownLine[] =
    "0xec0d9a030002b810 \"SwitchIB Mellanox Technologies\"    496    9[  ] ==(                Down/ Polling)==>"
    "             [  ] \"\" ( )\n";

TEST(Iblinkinfo, ACableListedFromBothEndsIsOneCable) {
  auto f = ParseIblinkinfo(std::string(kHostLine) + kSwitchLine + kSwitchDownLine, "l.txt");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->cables.size(), 1u);
  EXPECT_EQ(f->cables[0].where, "l.txt:1");
}

TEST(Iblinkinfo, SwitchToSwitchCablesAndRatesOfEveryGeneration) {
  // A leaf (two ports listed) cabled to a spine at HDR, and the spine's own
  // line with --additional's HOQ field.
  const std::string text =
      "0x0000000000000001 \"h1 mlx5_0\"  5  1[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==>  0x00000000000000aa  4  1[  ] "
      "\"leaf\" ( )\n"
      "0x00000000000000aa \"leaf\"  4  33[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==>  0x00000000000000bb  2  7[  ] "
      "\"spine\" ( )\n"
      "0x00000000000000bb \"spine\"  2  7[  ] ==( 4X 53.125 Gbps Active/  LinkUp) (HOQ:20 VL_Stall:7)==>  "
      "0x00000000000000aa  4  33[  ] \"leaf\" ( )\n"
      "0x00000000000000bb \"spine\"  2  8[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n";
  auto f = ParseIblinkinfo(text, "l.txt");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(f->CablesPerTier(), ElementsAre(1u, 1u));
  EXPECT_EQ(f->devices.at("S-00000000000000bb").tier, 2);
  EXPECT_EQ(f->cables[1].gbps, 200);
}

TEST(Iblinkinfo, ErrorsNameTheFileLineAndWhat) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"Switch: 0x0002c902004b2678 Infiniscale-IV Mellanox Technologies:\n",
       "l.txt:1: not an iblinkinfo --line port line"},
      {std::string(kHostLine).replace(std::string(kHostLine).find("25.78125"), 8, "7.5"),
       "l.txt:1: lane speed '7.5 Gbps' is not one iblinkinfo prints"},
      {std::string(kHostLine).replace(std::string(kHostLine).find("0xec0d"), 6, "zz"),
       "l.txt:1: cannot read the peer 'zz9a030002b810"},
      {std::string(kHostLine).replace(std::string(kHostLine).find("4X"), 2, "QX"), "l.txt:1: cannot read the link"},
      // The switch's port 20 says it is cabled to quorum01's HCA; thing4's line said to it.
      {std::string(kHostLine) +
           "0xec0d9a030002b810 \"SwitchIB Mellanox Technologies\"    496   20[  ] ==( 4X      25.78125 Gbps "
           "Active/  LinkUp)==>  0xec0d9a03006ed0ca    558    1[  ] \"quorum01 HCA-2\" ( )\n" +
           "0xec0d9a030002b810 \"SwitchIB Mellanox Technologies\"    496    9[  ] ==(                Down/ "
           "Polling)==>             [  ] \"\" ( )\n",
       "l.txt:2: S-ec0d9a030002b810[20] says its peer is H-ec0d9a03006ed0ca[1], but H-248a07030017b128[1] (l.txt:1) "
       "says S-ec0d9a030002b810[20] is its peer"},
      {kHostLine, "l.txt:1: cannot tell whether 0x248a07030017b128 (\"thing4 HCA-1\") or its peer 0xec0d9a030002b810"},
      {"# nothing\n\n", "l.txt: no port line: not iblinkinfo --line output"},
      {std::string(kHostLine).replace(std::string(kHostLine).find("Active"), 6, "Bogus"),
       "l.txt:1: port state 'Bogus' of a port with a width and speed"},
  };
  for (const auto& c : cases) {
    auto f = ParseIblinkinfo(c.text, "l.txt");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(f.status().message()), HasSubstr(c.want)) << c.text;
  }
  EXPECT_EQ(LoadIblinkinfo("/nonexistent/links.txt").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gdrbench::controller::topology
