// The fleet preflight's table, findings and JSON from a probe result: two
// nodes on one host (several agents per host, as in the lab), one FAIL.
#include "controller/cli/fleet_preflight.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::controller::cli {
namespace {

using ::testing::HasSubstr;

v1::CheckResult Check(const std::string& id, v1::CheckStatus s, const std::string& summary = "",
                      const std::string& fix = "") {
  v1::CheckResult c;
  c.set_id(id);
  c.set_status(s);
  c.set_summary(summary);
  c.set_remediation(fix);
  return c;
}

sweep::FleetPreflight Fleet() {
  sweep::FleetPreflight f;
  for (const char* name : {"a", "b", "c"}) {
    run::PlanNode n;
    n.name = name;
    n.address = std::string(name) + ":7070";
    f.probe.nodes.push_back(n);
    v1::NodeInfo info;
    info.set_hostname(std::string(name) == "c" ? "gpu-c" : "vm");
    f.probe.infos.push_back(info);
    v1::PreflightReport r;
    r.set_hostname(info.hostname());
    *r.add_checks() = Check("nvidia_driver", v1::CHECK_STATUS_SKIP);
    *r.add_checks() = Check("rdma_port_active", std::string(name) == "b" ? v1::CHECK_STATUS_FAIL : v1::CHECK_STATUS_PASS,
                            "rxe1 port 1 is PORT_DOWN", "ip link set veth1 up");
    *r.add_checks() = Check("pcie_acs", v1::CHECK_STATUS_WARN, "ACS on 0000:00:01.0", "disable ACS");
    r.set_overall(std::string(name) == "b" ? v1::CHECK_STATUS_FAIL : v1::CHECK_STATUS_WARN);
    f.probe.preflight.push_back(r);
  }
  f.answering = 3;
  return f;
}

TEST(FleetPreflightTable, OneRowPerNodeWithItsHostAndALetterPerCheck) {
  std::string t = FormatFleetTable(Fleet());
  EXPECT_THAT(t, HasSubstr("node  host   1  2  3  overall\n"));
  EXPECT_THAT(t, HasSubstr("a     vm     S  P  W  WARN\n"));
  EXPECT_THAT(t, HasSubstr("b     vm     S  F  W  FAIL\n"));
  EXPECT_THAT(t, HasSubstr("c     gpu-c  S  P  W  WARN\n"));
  EXPECT_THAT(t, HasSubstr("1 nvidia_driver  2 rdma_port_active  3 pcie_acs"));
}

TEST(FleetPreflightTable, FindingsAreGroupedByCheckNamingTheNodesFailFirst) {
  std::string f = FormatFleetFindings(Fleet());
  EXPECT_EQ(f,
            "FAIL rdma_port_active on b: rxe1 port 1 is PORT_DOWN -> fix: ip link set veth1 up\n"
            "WARN pcie_acs on a, b, c: ACS on 0000:00:01.0 -> fix: disable ACS\n");
}

TEST(FleetPreflightTable, JsonKeysEveryNodeByItsInventoryNameWithTheHost) {
  std::string j = FleetPreflightJson(Fleet());
  EXPECT_THAT(j, HasSubstr("{\"node\":\"a\",\"host\":\"vm\",\"address\":\"a:7070\",\"left_out\":\"\",\"preflight\":{"));
  EXPECT_THAT(j, HasSubstr("{\"node\":\"b\",\"host\":\"vm\""));
  EXPECT_THAT(j, HasSubstr("\"uniformity\":["));
}

}  // namespace
}  // namespace gdrbench::controller::cli
