// The controller's reading of a port's state: the enum, else (an agent before
// it) the deprecated string; every name as ibv_devinfo prints it (rdma-core
// libibverbs/examples/devinfo.c); the run's record keeping the string only.
#include "controller/run/port_state.h"

#include "gtest/gtest.h"

namespace gdrbench::controller::run {
namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

TEST(PortState, EveryValueToItsNameAndBack) {
  const std::pair<v1::PortState, const char*> kNames[] = {
      {v1::PORT_STATE_NOP, "PORT_NOP"},       {v1::PORT_STATE_DOWN, "PORT_DOWN"},
      {v1::PORT_STATE_INIT, "PORT_INIT"},     {v1::PORT_STATE_ARMED, "PORT_ARMED"},
      {v1::PORT_STATE_ACTIVE, "PORT_ACTIVE"}, {v1::PORT_STATE_ACTIVE_DEFER, "PORT_ACTIVE_DEFER"},
  };
  for (const auto& [state, name] : kNames) {
    EXPECT_EQ(PortStateName(state), name);
    EXPECT_EQ(PortStateFromName(name), state) << name;
  }
  EXPECT_EQ(std::size(kNames), static_cast<size_t>(v1::PortState_MAX)) << "a value without a name";
  EXPECT_EQ(PortStateName(v1::PORT_STATE_UNSPECIFIED), "");
  EXPECT_EQ(PortStateFromName(""), v1::PORT_STATE_UNSPECIFIED);
  EXPECT_EQ(PortStateFromName("PORT_UNKNOWN(7)"), v1::PORT_STATE_UNSPECIFIED);
  EXPECT_EQ(PortStateFromName("active"), v1::PORT_STATE_UNSPECIFIED)
      << "the agent sends ibv_devinfo's spelling";
}

TEST(PortState, TheEnumWinsElseAnOlderAgentsString) {
  v1::RdmaPort now;
  now.set_port_state(v1::PORT_STATE_DOWN);
  now.set_state("PORT_DOWN");
  EXPECT_EQ(PortStateOf(now), v1::PORT_STATE_DOWN);
  v1::RdmaPort older;  // an agent before the enum: the string only
  older.set_state("PORT_ACTIVE");
  EXPECT_EQ(PortStateOf(older), v1::PORT_STATE_ACTIVE);
  EXPECT_EQ(PortStateText(older), "PORT_ACTIVE");
  v1::RdmaPort unnamed;
  unnamed.set_state("PORT_UNKNOWN(7)");
  EXPECT_EQ(PortStateOf(unnamed), v1::PORT_STATE_UNSPECIFIED);
  EXPECT_EQ(PortStateText(unnamed), "PORT_UNKNOWN(7)");
}

TEST(PortState, TheRunRecordKeepsTheStringOnly) {
  v1::NodeInfo info;
  v1::NicInfo* nic = info.add_nics();
  v1::RdmaPort* both = nic->add_ports();
  both->set_port_state(v1::PORT_STATE_ACTIVE);
  both->set_state("PORT_ACTIVE");
  nic->add_ports()->set_port_state(v1::PORT_STATE_ARMED);  // an agent that sent the enum only
  nic->add_ports()->set_state("PORT_INIT");                // an older agent
  const v1::NodeInfo rec = ForRunRecord(info);
  ASSERT_EQ(rec.nics(0).ports_size(), 3);
  EXPECT_EQ(rec.nics(0).ports(0).state(), "PORT_ACTIVE");
  EXPECT_EQ(rec.nics(0).ports(1).state(), "PORT_ARMED");
  EXPECT_EQ(rec.nics(0).ports(2).state(), "PORT_INIT");
  for (const auto& p : rec.nics(0).ports()) EXPECT_EQ(p.port_state(), v1::PORT_STATE_UNSPECIFIED);
}

#pragma GCC diagnostic pop

}  // namespace
}  // namespace gdrbench::controller::run
