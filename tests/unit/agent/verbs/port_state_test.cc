// The agent's port state against libibverbs' own numbers: every expected
// value below is a constant of enum ibv_port_state in
// /usr/include/infiniband/verbs.h (rdma-core), not one of ours.
#include "agent/verbs/port_state.h"

#include <infiniband/verbs.h>

#include "gtest/gtest.h"

namespace gdrbench::agent::verbs {
namespace {

struct Known {
  int ibv;
  PortState state;
  const char* name;
};

// ibv_devinfo's spellings (rdma-core libibverbs/examples/devinfo.c, port_state_str's "PORT_" forms).
const Known kKnown[] = {
    {IBV_PORT_NOP, PortState::kNop, "PORT_NOP"},
    {IBV_PORT_DOWN, PortState::kDown, "PORT_DOWN"},
    {IBV_PORT_INIT, PortState::kInit, "PORT_INIT"},
    {IBV_PORT_ARMED, PortState::kArmed, "PORT_ARMED"},
    {IBV_PORT_ACTIVE, PortState::kActive, "PORT_ACTIVE"},
    {IBV_PORT_ACTIVE_DEFER, PortState::kActiveDefer, "PORT_ACTIVE_DEFER"},
};

TEST(PortState, IbvCodeToStateAndBack) {
  for (const Known& k : kKnown) {
    EXPECT_EQ(PortStateFromIbv(k.ibv), k.state) << k.name;
    EXPECT_EQ(PortStateToIbv(k.state), k.ibv) << k.name;
  }
}

TEST(PortState, StateToNameAndBack) {
  for (const Known& k : kKnown) {
    EXPECT_EQ(PortStateName(k.state), k.name);
    EXPECT_EQ(ParsePortState(k.name), k.state) << k.name;
  }
}

TEST(PortState, AnUnnamedCodeKeepsItsNumber) {
  const PortState seven = PortStateFromIbv(7);
  EXPECT_EQ(PortStateToIbv(seven), 7);
  EXPECT_EQ(PortStateName(seven), "PORT_UNKNOWN(7)");
  EXPECT_EQ(PortStateName(PortState::kUnread), "");
}

TEST(PortState, ParsesEverySpelling) {
  EXPECT_EQ(ParsePortState("active"), PortState::kActive);     // ibv_port_state_str
  EXPECT_EQ(ParsePortState("4: ACTIVE"), PortState::kActive);  // sysfs ports/N/state
  EXPECT_EQ(ParsePortState("1: DOWN\n"), PortState::kDown);
  EXPECT_EQ(ParsePortState("down"), PortState::kDown);
  EXPECT_EQ(ParsePortState("active defer"), PortState::kActiveDefer);
  EXPECT_EQ(ParsePortState("7: FUTURE"), PortStateFromIbv(7));  // sysfs: the number counts
  EXPECT_EQ(ParsePortState("LINK_UP"), PortState::kUnread);     // a physical state, not this
  EXPECT_EQ(ParsePortState(""), PortState::kUnread);
  EXPECT_EQ(ParsePortState("x: ACTIVE"), PortState::kUnread);
}

}  // namespace
}  // namespace gdrbench::agent::verbs
