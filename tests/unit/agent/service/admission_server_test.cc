// Admission in the agent's real server (issue 36): a connection becomes
// authenticated by its first call and then outlives the handshake deadline;
// connections that made no call (raw TCP, a gRPC channel that connected and
// stayed silent) are closed at it. An in-process server on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "agent/service/server.h"
#include "gdrbench/v1/agent.grpc.pb.h"
#include "grpcpp/create_channel.h"

namespace gdrbench::agent::service {
namespace {

using std::chrono::milliseconds;

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

// true when the server closed `fd` within `within` (EOF or a reset); what
// it sent before (a plaintext server's HTTP/2 SETTINGS) is read and ignored.
bool ClosedByServer(int fd, milliseconds within) {
  auto until = std::chrono::steady_clock::now() + within;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1) return false;
    char buf[256];
    if (recv(fd, buf, sizeof(buf), 0) <= 0) return true;
  }
}

// A channel with its own connection (gRPC shares subchannels of equal
// targets and arguments across channels otherwise).
std::shared_ptr<grpc::Channel> OwnChannel(int port) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args);
}

TEST(AgentAdmission, ACallKeepsItsConnectionPastTheDeadlineAndSilentOnesAreClosed) {
  AgentServerConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.tls.insecure = true;
  cfg.admission.handshake_deadline = milliseconds(300);
  auto server = AgentServer::Start(cfg);
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();

  int raw = Connect(port);
  auto silent = OwnChannel(port);
  ASSERT_TRUE(silent->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5)));
  auto caller = OwnChannel(port);
  auto stub = v1::Agent::NewStub(caller);
  auto call = [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::NodeInfo info;
    return stub->GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info);
  };
  ASSERT_TRUE(call().ok());

  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(ClosedByServer(raw, milliseconds(3000)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1500));  // 300 ms, not gRPC's 120 s
  std::this_thread::sleep_for(milliseconds(700));  // well past the deadline of all three
  EXPECT_NE(silent->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_EQ(caller->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_TRUE(call().ok());
  close(raw);
}

TEST(AgentServer, AfterShutdownThePortRefusesConnections) {
  AgentServerConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.tls.insecure = true;
  auto server = AgentServer::Start(cfg);
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();
  close(Connect(port));
  (*server)->Shutdown(0);
  // Not a handshake the kernel completes and nobody accepts (a hung agent):
  // ECONNREFUSED, as from a stopped one.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_NE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  close(fd);
}

TEST(AgentAdmission, BudgetsPastHalfTheConnectionsAreRefusedAtStart) {
  AgentServerConfig cfg;
  cfg.listen = "127.0.0.1:0";
  cfg.tls.insecure = true;
  cfg.admission.total = limits::kMaxConnections / 2;
  auto server = AgentServer::Start(cfg);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find("--unauthenticated-total 256 and the health port's 32 exceed 256"),
            std::string::npos)
      << server.status();
}

}  // namespace
}  // namespace gdrbench::agent::service
