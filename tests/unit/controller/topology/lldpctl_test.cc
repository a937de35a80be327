// LLDP neighbours as `lldpctl -f json` prints them: lldpd's own integration
// test output (tests/testdata/topology/README.md), lldpctl's list form for
// several interfaces, the fabric built from one file per system, and every
// error path.
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/topology/fabric.h"
#include "controller/topology/lldpctl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::topology {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

const std::string kDir = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/topology/lldp";

TEST(Lldpctl, LldpdsOwnOutputNamesTheFarPortByItsDescription) {
  std::ifstream in(kDir + "/ns-1.example.com.json");
  std::stringstream text;
  text << in.rdbuf();
  auto n = ParseLldpctlJson(text.str(), "ns-1.json");
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->size(), 1u);
  EXPECT_EQ((*n)[0].local_port, "eth0");
  EXPECT_EQ((*n)[0].chassis, "ns-2.example.com");
  EXPECT_EQ((*n)[0].port, "eth1");  // the id is a MAC: the description names the port
  EXPECT_EQ((*n)[0].where, "ns-1.json:4");
}

TEST(Lldpctl, ADirectoryOfSystemsIsAFabric) {
  auto f = LoadLldpDir(kDir, {"ns-1.example.com"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->CountDevices(DeviceKind::kHost), 1u);
  EXPECT_EQ(f->CountDevices(DeviceKind::kSwitch), 1u);
  EXPECT_THAT(f->CablesPerTier(), ElementsAre(1u));
  const Cable& c = f->cables[0];
  EXPECT_EQ(c.lower.device, "ns-1.example.com");
  EXPECT_EQ(f->devices.at("ns-1.example.com").port_names.at(c.lower.port), "eth0");
  EXPECT_EQ(f->devices.at("ns-2.example.com").port_names.at(c.upper.port), "eth1");
  EXPECT_EQ(c.gbps, 0);  // LLDP carries no rate
}

// lldpctl's list form (several interfaces), as a SONiC leaf printed it:
// a leaf hearing a host and a spine; the spine's own file hears the leaf.
constexpr char kLeaf[] = R"({
  "lldp": {
    "interface": [
      {"Ethernet0": {"via": "LLDP", "chassis": {"gpu01": {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}}},
                     "port": {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}, "descr": "eth2"}}},
      {"Ethernet64": {"via": "LLDP", "chassis": {"spine1": {"id": {"type": "mac", "value": "0c:42:a1:00:00:aa"}}},
                      "port": {"id": {"type": "ifname", "value": "Ethernet8"}, "descr": "to leaf1"}}}
    ]
  }
})";
constexpr char kSpine[] = R"({"lldp": {"interface": {"Ethernet8": {"via": "LLDP",
  "chassis": {"id": {"type": "mac", "value": "leaf1"}},
  "port": {"id": {"type": "local", "value": "Ethernet64"}}}}}})";

TEST(Lldpctl, TheListFormAndSwitchesHeardFromBothEnds) {
  auto leaf = ParseLldpctlJson(kLeaf, "leaf1.json");
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  ASSERT_EQ(leaf->size(), 2u);
  EXPECT_EQ((*leaf)[1].port, "Ethernet8");  // an ifname id names the port
  auto spine = ParseLldpctlJson(kSpine, "spine1.json");
  ASSERT_TRUE(spine.ok()) << spine.status();
  EXPECT_EQ((*spine)[0].chassis, "leaf1");  // no system name: the chassis id
  auto f = FabricFromLldp({{"leaf1", *leaf}, {"spine1", *spine}}, {"gpu01"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(f->CablesPerTier(), ElementsAre(1u, 1u));  // the uplink once, heard from both ends
  EXPECT_EQ(f->devices.at("spine1").tier, 2);
}

TEST(Lldpctl, ErrorsNameTheFileLineAndWhat) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"{\"lldp\": {\"interface\": {\"eth0\": [1,", "n.json:1: not JSON"},
      {"[]", "n.json: no \"lldp\" object: not lldpctl -f json output"},
      {"{\"lldp\": {\"interface\": 3}}", "n.json:1: lldp.interface: neither an object nor a list"},
      {"{\"lldp\": 3}", "n.json:1: lldp: not an object"},
      {"{\"lldp\": {\"interface\": [{\"a\": {}, \"b\": {}}]}}", "n.json:1: lldp.interface[]: not a one-key object"},
      {"{\"lldp\": {\"interface\": {\"eth0\": 1}}}", "lldp.interface.eth0: not an object"},
      {"{\"lldp\": {\"interface\": {\"eth0\": {\"port\": {}}}}}", "lldp.interface.eth0.chassis: no chassis"},
      {"{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"id\": {\"type\": \"mac\"}}}}}}",
       "lldp.interface.eth0.chassis.id: no value"},
      {"{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"sw\": {}}}}}}", "lldp.interface.eth0.port: no port"},
      {"{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"sw\": {}}, \"port\": {\"descr\": \"x\"}}}}}",
       "lldp.interface.eth0.port: no id"},
      {"{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"sw\": {}},\n \"port\": {\"id\": {\"type\": \"mac\", "
       "\"value\": \"aa\"}}}}}}",
       "n.json:2: lldp.interface.eth0.port: its id is a mac and it has no descr to name the port by"},
  };
  for (const auto& c : cases) {
    auto n = ParseLldpctlJson(c.text, "n.json");
    ASSERT_FALSE(n.ok()) << c.text;
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(n.status().message()), HasSubstr(c.want)) << c.text;
  }
  auto empty = ParseLldpctlJson("{\"lldp\": {}}", "n.json");  // no neighbour heard: valid, empty
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(Lldpctl, FabricErrors) {
  auto leaf = ParseLldpctlJson(kLeaf, "leaf1.json");
  ASSERT_TRUE(leaf.ok());
  EXPECT_THAT(std::string(FabricFromLldp({{"leaf1", *leaf}}, {}).status().message()),
              HasSubstr("needs the inventory"));
  // The spine says its Ethernet8 hears leaf1's Ethernet60; leaf1 said Ethernet64.
  std::string spine = kSpine;
  spine.replace(spine.find("Ethernet64"), 10, "Ethernet60");
  auto other = ParseLldpctlJson(spine, "spine1.json");
  ASSERT_TRUE(other.ok());
  auto f = FabricFromLldp({{"leaf1", *leaf}, {"spine1", *other}}, {"gpu01"});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("spine1.json:1: spine1[Ethernet8] says its peer is leaf1[Ethernet60], but leaf1[Ethernet64] "
                        "(leaf1.json:6) says spine1[Ethernet8] is its peer"));
  EXPECT_EQ(LoadLldpDir("/nonexistent", {"h"}).status().code(), absl::StatusCode::kNotFound);
  const auto empty_dir = std::filesystem::temp_directory_path() / "gdrbench-lldp-empty";
  std::filesystem::create_directories(empty_dir);
  EXPECT_THAT(std::string(LoadLldpDir(empty_dir.string(), {"h"}).status().message()), HasSubstr("no NAME.json"));
}

}  // namespace
}  // namespace gdrbench::controller::topology
