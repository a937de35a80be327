// Admission of unauthenticated connections (issue 36): budgets per address
// and in total, which connection a full budget gives up, deadlines, the
// controller pool and the one-line-per-interval refusal summary.
#include "agent/service/admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace gdrbench::agent::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Clock = Admission::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

PeerAddress Peer(const std::string& ip, int port) {
  auto p = PeerFromGrpc(absl::StrCat(ip.find(':') == std::string::npos ? "ipv4:" : "ipv6:[", ip,
                                     ip.find(':') == std::string::npos ? "" : "]", ":", port));
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

// Connections the test has "closed" (the listener's fstat says so).
struct Sockets {
  std::set<Admission::ConnId> closed;
  Admission::IsAlive alive() {
    return [this](Admission::ConnId id) { return closed.count(id) == 0; };
  }
};

std::vector<Admission::ConnId> Ids(const std::vector<Admission::Drop>& drops) {
  std::vector<Admission::ConnId> ids;
  for (const auto& d : drops) ids.push_back(d.id);
  return ids;
}

AdmissionConfig Budgets(int per_address, int total) {
  AdmissionConfig c;
  c.per_address = per_address;
  c.total = total;
  return c;
}

AdmissionConfig Deadline(milliseconds d) {
  AdmissionConfig c;
  c.handshake_deadline = d;
  return c;
}

class AdmissionTest : public ::testing::Test {
 protected:
  Admission Make(AdmissionConfig c) {
    auto a = Admission::Create(std::move(c), t0_);
    EXPECT_TRUE(a.ok()) << a.status();
    return std::move(*a);
  }
  Clock::time_point t0_ = Clock::now();
  Sockets sockets_;
};

TEST_F(AdmissionTest, AFullAddressBudgetDropsThatAddressesOldest) {
  Admission a = Make(Budgets(3, 100));
  for (int id = 1; id <= 3; ++id) EXPECT_THAT(a.Admit(id, Peer("10.0.0.9", 1000 + id), t0_, sockets_.alive()), IsEmpty());
  EXPECT_THAT(a.Admit(4, Peer("10.0.0.8", 2000), t0_, sockets_.alive()), IsEmpty());
  auto drops = a.Admit(5, Peer("10.0.0.9", 1005), t0_, sockets_.alive());
  ASSERT_THAT(Ids(drops), ElementsAre(1));
  EXPECT_EQ(drops[0].reason, DropReason::kPerAddressBudget);
  EXPECT_EQ(a.unauthenticated(), 4);
}

TEST_F(AdmissionTest, AFullTotalBudgetDropsTheOldestOfTheAddressHoldingTheMost) {
  Admission a = Make(Budgets(4, 4));
  a.Admit(1, Peer("10.0.0.1", 1), t0_, sockets_.alive());  // the oldest of all: a lone controller
  for (int id = 2; id <= 4; ++id) a.Admit(id, Peer("10.6.6.6", id), t0_, sockets_.alive());
  auto drops = a.Admit(5, Peer("10.7.7.7", 5), t0_, sockets_.alive());
  ASSERT_THAT(Ids(drops), ElementsAre(2));
  EXPECT_EQ(drops[0].reason, DropReason::kTotalBudget);
}

TEST_F(AdmissionTest, WhenEveryAddressHoldsAsManyTheOldestOfAllGoes) {
  Admission a = Make(Budgets(2, 3));
  a.Admit(1, Peer("10.0.0.3", 1), t0_, sockets_.alive());
  a.Admit(2, Peer("10.0.0.1", 1), t0_, sockets_.alive());
  a.Admit(3, Peer("10.0.0.2", 1), t0_, sockets_.alive());
  EXPECT_THAT(Ids(a.Admit(4, Peer("10.0.0.4", 1), t0_, sockets_.alive())), ElementsAre(1));
}

TEST_F(AdmissionTest, AnAuthenticatedConnectionIsNeverDropped) {
  Admission a = Make(Budgets(2, 2));
  a.Admit(1, Peer("10.0.0.1", 50), t0_, sockets_.alive());
  EXPECT_TRUE(a.Authenticate(Peer("10.0.0.1", 50).Key()));
  EXPECT_FALSE(a.Authenticate(Peer("10.0.0.1", 50).Key()));  // once
  for (int id = 2; id < 500; ++id) {
    for (const auto& d : a.Admit(id, Peer("10.0.0.1", 100 + id), t0_ + milliseconds(id), sockets_.alive())) {
      ASSERT_NE(d.id, 1u);
    }
    for (const auto& d : a.Expire(t0_ + seconds(100) + milliseconds(id), sockets_.alive())) ASSERT_NE(d.id, 1u);
  }
  EXPECT_EQ(a.authenticated(), 1);
}

TEST_F(AdmissionTest, AnUnknownPeerAuthenticatesNothing) {
  Admission a = Make(AdmissionConfig());
  a.Admit(1, Peer("10.0.0.1", 50), t0_, sockets_.alive());
  EXPECT_FALSE(a.Authenticate(Peer("10.0.0.1", 51).Key()));
  EXPECT_FALSE(a.Authenticate("garbage"));
  EXPECT_EQ(a.authenticated(), 0);
}

TEST_F(AdmissionTest, OnlyUnauthenticatedConnectionsMeetTheDeadline) {
  Admission a = Make(Deadline(seconds(5)));
  a.Admit(1, Peer("10.0.0.1", 1), t0_, sockets_.alive());
  a.Admit(2, Peer("10.0.0.1", 2), t0_ + seconds(1), sockets_.alive());
  a.Admit(3, Peer("10.0.0.2", 3), t0_ + seconds(2), sockets_.alive());
  a.Authenticate(Peer("10.0.0.1", 2).Key());
  EXPECT_EQ(a.NextDeadline(), t0_ + seconds(5));
  EXPECT_THAT(a.Expire(t0_ + seconds(5) - milliseconds(1), sockets_.alive()), IsEmpty());
  auto drops = a.Expire(t0_ + seconds(6), sockets_.alive());
  ASSERT_THAT(Ids(drops), ElementsAre(1));
  EXPECT_EQ(drops[0].reason, DropReason::kHandshakeDeadline);
  EXPECT_EQ(a.NextDeadline(), t0_ + seconds(7));
  EXPECT_THAT(Ids(a.Expire(t0_ + seconds(7), sockets_.alive())), ElementsAre(3));
  EXPECT_EQ(a.NextDeadline(), std::nullopt);
  EXPECT_EQ(a.authenticated(), 1);
}

TEST_F(AdmissionTest, AConnectionAlreadyClosedIsForgottenNotDroppedOrCounted) {
  Admission a = Make(Budgets(2, 10));
  a.Admit(1, Peer("10.0.0.1", 1), t0_, sockets_.alive());
  a.Admit(2, Peer("10.0.0.1", 2), t0_, sockets_.alive());
  sockets_.closed.insert(1);
  // Room made by forgetting the closed one: nothing to drop.
  EXPECT_THAT(a.Admit(3, Peer("10.0.0.1", 3), t0_, sockets_.alive()), IsEmpty());
  EXPECT_EQ(a.unauthenticated(), 2);
  sockets_.closed.insert(2);
  EXPECT_THAT(a.Expire(t0_ + seconds(60), sockets_.alive()), ElementsAre(::testing::Field(&Admission::Drop::id, 3)));
  EXPECT_EQ(a.dropped_total(), 1u);
}

TEST_F(AdmissionTest, TheSameAddressAndPortAgainReplacesTheClosedConnection) {
  Admission a = Make(Budgets(2, 10));
  a.Admit(1, Peer("10.0.0.1", 7), t0_, sockets_.alive());
  EXPECT_THAT(a.Admit(2, Peer("10.0.0.1", 7), t0_, sockets_.alive()), IsEmpty());
  EXPECT_EQ(a.unauthenticated(), 1);
  a.Forget(2);
  EXPECT_EQ(a.unauthenticated(), 0);
}

TEST_F(AdmissionTest, ControllerAddressesHaveAPoolOthersCannotTouch) {
  auto cidr = Cidr::Parse("10.1.0.0/16");
  ASSERT_TRUE(cidr.ok());
  AdmissionConfig c = Budgets(1, 2);
  c.controller_cidrs = {*cidr};
  Admission a = Make(c);
  a.Admit(1, Peer("10.1.2.3", 1), t0_, sockets_.alive());
  // 1,000 other addresses, one connection each: the oldest of all would be
  // the controller's, were it in their pool.
  for (int i = 0; i < 1000; ++i) {
    std::string ip = absl::StrCat("192.168.", i / 250, ".", i % 250 + 1);
    for (const auto& d : a.Admit(2 + i, Peer(ip, 9), t0_, sockets_.alive())) {
      ASSERT_NE(d.id, 1u);
      ASSERT_EQ(d.reason, DropReason::kTotalBudget);
    }
  }
  EXPECT_EQ(a.unauthenticated(), 3);
  // Its own pool has the same budgets.
  EXPECT_THAT(a.Admit(5000, Peer("10.1.2.4", 1), t0_, sockets_.alive()), IsEmpty());
  EXPECT_THAT(Ids(a.Admit(5001, Peer("10.1.2.5", 1), t0_, sockets_.alive())), ElementsAre(1));
}

// Without --controller-cidr: fewer flooding addresses than total - 1 can
// churn for ever and never drop a lone controller's connection, since one
// of them then holds more than it.
TEST_F(AdmissionTest, FewerFloodingAddressesThanTheTotalBudgetNeverDropALoneConnection) {
  const int total = 16;
  for (int flooders = 1; flooders <= total - 2; ++flooders) {
    Admission a = Make(Budgets(4, total));
    a.Admit(1, Peer("10.0.0.1", 1), t0_, sockets_.alive());
    for (int i = 0; i < 2000; ++i) {
      std::string ip = absl::StrCat("10.9.0.", i % flooders + 1);
      for (const auto& d : a.Admit(2 + i, Peer(ip, 1000 + i), t0_ + milliseconds(i), sockets_.alive())) {
        ASSERT_NE(d.id, 1u) << flooders << " flooding addresses, connection " << i;
      }
    }
    EXPECT_TRUE(a.Authenticate(Peer("10.0.0.1", 1).Key())) << flooders;
  }
}

TEST_F(AdmissionTest, RefusalsAreOneLinePerIntervalWithAddressesAndReasons) {
  Admission a = Make(Budgets(1, 10));  // the default interval: 10 s
  EXPECT_EQ(a.TakeSummary(t0_), std::nullopt);  // nothing refused: no line
  a.Admit(1, Peer("10.0.0.1", 1), t0_, sockets_.alive());
  a.Admit(2, Peer("10.0.0.1", 2), t0_, sockets_.alive());
  auto first = a.TakeSummary(t0_);  // the first comes at once
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT(*first, HasSubstr("refused or dropped 1 unauthenticated connections from 1 clients"));
  EXPECT_THAT(*first, HasSubstr("10.0.0.1 1 (1 address budget full)"));
  for (int i = 3; i < 40; ++i) a.Admit(i, Peer("10.0.0.1", i), t0_ + seconds(1), sockets_.alive());
  a.CountRefused(Peer("10.0.0.2", 5), DropReason::kFdBudget);
  a.Expire(t0_ + seconds(9), sockets_.alive());
  EXPECT_EQ(a.TakeSummary(t0_ + seconds(9)), std::nullopt);  // within the interval
  auto second = a.TakeSummary(t0_ + seconds(10));
  ASSERT_TRUE(second.has_value());
  EXPECT_THAT(*second, HasSubstr("refused or dropped 39 unauthenticated connections from 2 clients"));
  EXPECT_THAT(*second, HasSubstr("10.0.0.1 38 (37 address budget full, 1 no call within the handshake deadline); "
                                 "10.0.0.2 1 (1 fd budget full)"));
  EXPECT_EQ(a.TakeSummary(t0_ + seconds(30)), std::nullopt);  // counted once
}

TEST_F(AdmissionTest, ASummaryNamesTheEightBusiestClientsAndCountsTheRest) {
  Admission a = Make(AdmissionConfig());  // the default interval: 10 s
  for (int i = 1; i <= 12; ++i) {
    for (int n = 0; n < i; ++n) a.CountRefused(Peer(absl::StrCat("10.0.0.", i), 1), DropReason::kOutOfFds);
  }
  auto line = a.TakeSummary(t0_);
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line, HasSubstr("from 12 clients"));
  EXPECT_THAT(*line, HasSubstr(": 10.0.0.12 12 (12 out of fds); 10.0.0.11 11"));
  EXPECT_THAT(*line, HasSubstr("10.0.0.5 5 (5 out of fds); and 4 more clients"));
  EXPECT_THAT(*line, ::testing::Not(HasSubstr("10.0.0.4 ")));
}

TEST_F(AdmissionTest, BadConfigsAreRefusedNamingTheFlag) {
  auto now = Clock::now();
  EXPECT_THAT(Admission::Create(Deadline(milliseconds(0)), now).status().message(),
              HasSubstr("--handshake-deadline-s must be positive"));
  EXPECT_THAT(Admission::Create(Budgets(1, 0), now).status().message(),
              HasSubstr("--unauthenticated-total must be at least 1"));
  EXPECT_THAT(Admission::Create(Budgets(9, 8), now).status().message(),
              HasSubstr("--unauthenticated-per-address must be 1..8"));
}

}  // namespace
}  // namespace gdrbench::agent::service
