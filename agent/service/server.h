// The agent's gRPC server: the Agent service, grpc.health.v1 and server
// reflection, behind TLS (mTLS with a client CA) unless insecure is explicit.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "agent/service/agent_handler.h"
#include "agent/service/grpc_service.h"
#include "agent/service/listener.h"
#include "common/rpc/server_tls.h"
#include "common/rpc/tls.h"
#include "grpcpp/server.h"

namespace gdrbench::agent::service {

struct AgentServerConfig {
  std::string listen = "0.0.0.0:7070";  // HOST:PORT; port 0 picks a free one
  rpc::ServerTlsConfig tls;
  AgentConfig agent;
  // HOST:PORT of a second, plaintext listener that serves grpc.health.v1 and
  // nothing else, for probes that cannot present a client certificate (the
  // kubelet's native gRPC probe speaks plaintext only). Empty: none.
  std::string health_listen;
  // Unauthenticated connections on the agent port: deadline, budgets,
  // --controller-cidr. The health port has the same deadline and budgets of
  // its own (limits::kHealthPerAddress, kHealthTotal).
  AdmissionConfig admission;
  PreflightCallLimits preflight;
  // Tests: a handler of their own (a stuck one). Empty: AgentHandler.
  std::function<std::unique_ptr<AgentHandler>(const AgentConfig&)> make_handler;
};

class AgentServer {
 public:
  // Validates the config, binds and starts serving. INVALID_ARGUMENT for a bad
  // address, TLS or admission config (budgets past half of
  // limits::kMaxConnections); UNAVAILABLE when an address cannot be bound.
  static absl::StatusOr<std::unique_ptr<AgentServer>> Start(AgentServerConfig config);
  ~AgentServer();

  int port() const { return port_; }
  // Stops accepting calls, gives calls in flight up to `grace_ms`, then returns.
  void Shutdown(int grace_ms = 2000);
  // SIGTERM: Shutdown within `deadline_ms`. false when a call's handler is
  // still running then (stuck in the kernel); the caller exits anyway and
  // must not destroy this server.
  bool Drain(int deadline_ms);
  void Wait();
  // SIGHUP: --tls-cert/--tls-key/--tls-client-ca read again; the line to log
  // (rpc::ReloadableServerTls::Reload). Calls and connections in flight keep
  // their session; a bad replacement leaves the current one serving.
  absl::StatusOr<std::string> ReloadTls() { return tls_->Reload(); }

 private:
  AgentServer() = default;
  absl::Status StartHealth(const std::string& address, Admission admission,
                           std::chrono::milliseconds handshake_deadline);
  std::unique_ptr<rpc::ReloadableServerTls> tls_;  // outlives the servers that use it
  std::unique_ptr<AgentHandler> handler_;
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<GrpcAgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Listener> health_listener_;      // --health-listen
  std::unique_ptr<grpc::Server> health_server_;
  int port_ = 0;
  std::mutex shutdown_mu_;
};

}  // namespace gdrbench::agent::service
