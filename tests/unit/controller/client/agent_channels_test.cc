// AgentClients sharing one AgentChannels cache over real gRPC on loopback:
// a channel closed for room is reopened by the next call and works, and an
// agent that died (its channel evicted or still cached) is named in the
// error of the call that needed it.
#include "controller/client/agent_channels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "agent/service/server.h"
#include "controller/client/agent_client.h"

namespace gdrbench::controller {
namespace {

using ::testing::HasSubstr;

// An agent that answers GetNodeInfo with its own name.
class NamedAgent : public agent::service::AgentHandler {
 public:
  NamedAgent(const agent::service::AgentConfig& c, std::string name)
      : AgentHandler(c), name_(std::move(name)) {}
  absl::StatusOr<v1::NodeInfo> GetNodeInfo(const v1::GetNodeInfoRequest&) override {
    v1::NodeInfo info;
    info.set_hostname(name_);
    return info;
  }

 private:
  std::string name_;
};

std::unique_ptr<agent::service::AgentServer> Serve(const std::string& name) {
  agent::service::AgentServerConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.tls.insecure = true;
  cfg.make_handler = [name](const agent::service::AgentConfig& c) {
    return std::make_unique<NamedAgent>(c, name);
  };
  auto server = agent::service::AgentServer::Start(cfg);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

std::unique_ptr<AgentClient> Client(const agent::service::AgentServer& server,
                                    std::shared_ptr<AgentChannels> channels) {
  AgentClientConfig cfg;
  cfg.address = "127.0.0.1:" + std::to_string(server.port());
  cfg.tls.insecure = true;
  cfg.connect_timeout = std::chrono::milliseconds(500);
  cfg.rpc_timeout = std::chrono::milliseconds(5000);
  auto c = AgentClient::Create(cfg, std::move(channels));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(*c) : nullptr;
}

std::shared_ptr<AgentChannels> OneChannel() {
  rpc::ClientTlsConfig tls;
  tls.insecure = true;
  auto channels = MakeAgentChannels(tls, 1);
  EXPECT_TRUE(channels.ok()) << channels.status();
  return channels.ok() ? *channels : nullptr;
}

std::string Hostname(AgentClient& c) {
  auto info = c.GetNodeInfo();
  return info.ok() ? info->hostname() : std::string(info.status().message());
}

// `c`'s agent is gone: its call fails UNAVAILABLE and names its address.
void ExpectNamedUnreachable(AgentClient& c) {
  auto dead = c.GetNodeInfo();
  ASSERT_FALSE(dead.ok());
  EXPECT_EQ(dead.status().code(), absl::StatusCode::kUnavailable) << dead.status();
  EXPECT_THAT(std::string(dead.status().message()), HasSubstr(c.address()));
  EXPECT_THAT(std::string(dead.status().message()), HasSubstr("unreachable"));
}

TEST(AgentChannels, AChannelClosedForRoomIsReopenedAndWorks) {
  auto a_server = Serve("a"), b_server = Serve("b");
  ASSERT_TRUE(a_server && b_server);
  auto channels = OneChannel();
  ASSERT_TRUE(channels);
  auto a = Client(*a_server, channels), b = Client(*b_server, channels);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(Hostname(*a), "a");
  EXPECT_EQ(Hostname(*b), "b");  // a's channel closed for b's
  EXPECT_EQ(channels->stats().closed, 1u);
  EXPECT_EQ(Hostname(*a), "a");  // reopened
  EXPECT_EQ(Hostname(*a), "a");  // and kept
  const auto s = channels->stats();
  EXPECT_EQ(s.opened, 3u);
  EXPECT_EQ(s.closed, 2u);
  EXPECT_EQ(s.most_open, 1u);
}

TEST(AgentChannels, AnAgentThatDiedIsNamedWhetherItsChannelWasKeptOrClosed) {
  auto a_server = Serve("a"), b_server = Serve("b");
  ASSERT_TRUE(a_server && b_server);
  auto channels = OneChannel();
  ASSERT_TRUE(channels);
  auto a = Client(*a_server, channels), b = Client(*b_server, channels);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(Hostname(*a), "a");
  EXPECT_EQ(Hostname(*b), "b");
  // b dies while its channel is the one kept.
  b_server->Shutdown(100);
  b_server.reset();
  ExpectNamedUnreachable(*b);
  // a's channel was closed for b's; a dies, then is asked again: reopened,
  // and named.
  a_server->Shutdown(100);
  a_server.reset();
  ExpectNamedUnreachable(*a);
}

TEST(AgentChannels, ABadAddressFailsWhenTheClientIsMadeNotAtItsFirstCall) {
  auto channels = OneChannel();
  ASSERT_TRUE(channels);
  AgentClientConfig cfg;
  cfg.address = "host-without-port";
  cfg.tls.insecure = true;
  auto c = AgentClient::Create(cfg, channels);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("'host-without-port' is not HOST:PORT"));
}

TEST(AgentChannels, AClientOfItsOwnNamesABadAddressBeforeItReadsTheCredentials) {
  AgentClientConfig cfg;
  cfg.address = "host-without-port";
  cfg.tls.ca_file = "/nonexistent/ca.pem";
  cfg.tls.cert_file = "/nonexistent/cert.pem";
  cfg.tls.key_file = "/nonexistent/key.pem";
  auto c = AgentClient::Create(cfg);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("'host-without-port' is not HOST:PORT"));
  // With a good address the same credentials are read, and fail.
  cfg.address = "127.0.0.1:1";
  c = AgentClient::Create(cfg);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("/nonexistent/ca.pem"));
}

TEST(AgentChannels, TheBoundIsFourChannelsPerParallelTest) {
  EXPECT_EQ(ChannelBound(64), 256u);
  EXPECT_EQ(ChannelBound(1), 4u);
  EXPECT_EQ(ChannelBound(0), 4u);
}

}  // namespace
}  // namespace gdrbench::controller
