// The agent's port state at the service boundary: each libibverbs state
// (enum ibv_port_state, /usr/include/infiniband/verbs.h) becomes the
// v1::PortState of the same number (NOP, ibv's 0, is 6: proto3's 0 is
// UNSPECIFIED), and the deprecated string keeps ibv_devinfo's spelling.
#include <infiniband/verbs.h>

#include "agent/service/node_info.h"
#include "agent/verbs/port_state.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::service {
namespace {

TEST(PortStateProto, EveryIbvStateHasItsProtoValue) {
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_DOWN)), v1::PORT_STATE_DOWN);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_INIT)), v1::PORT_STATE_INIT);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_ARMED)), v1::PORT_STATE_ARMED);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_ACTIVE)), v1::PORT_STATE_ACTIVE);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_ACTIVE_DEFER)), v1::PORT_STATE_ACTIVE_DEFER);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(IBV_PORT_NOP)), v1::PORT_STATE_NOP);
  for (int ibv : {IBV_PORT_DOWN, IBV_PORT_INIT, IBV_PORT_ARMED, IBV_PORT_ACTIVE, IBV_PORT_ACTIVE_DEFER}) {
    EXPECT_EQ(static_cast<int>(ToProto(verbs::PortStateFromIbv(ibv))), ibv) << "same number as verbs.h";
  }
}

TEST(PortStateProto, NotReadOrUnnamedIsUnspecified) {
  EXPECT_EQ(ToProto(verbs::PortState::kUnread), v1::PORT_STATE_UNSPECIFIED);
  EXPECT_EQ(ToProto(verbs::PortStateFromIbv(7)), v1::PORT_STATE_UNSPECIFIED);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(PortStateProto, SetsTheEnumAndTheDeprecatedString) {
  v1::RdmaPort port;
  SetPortState(verbs::PortStateFromIbv(IBV_PORT_ACTIVE), port);
  EXPECT_EQ(port.port_state(), v1::PORT_STATE_ACTIVE);
  EXPECT_EQ(port.state(), "PORT_ACTIVE");
  SetPortState(verbs::PortStateFromIbv(7), port);
  EXPECT_EQ(port.port_state(), v1::PORT_STATE_UNSPECIFIED);
  EXPECT_EQ(port.state(), "PORT_UNKNOWN(7)");
}
#pragma GCC diagnostic pop

}  // namespace
}  // namespace gdrbench::agent::service
