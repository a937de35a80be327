#include "agent/service/server.h"

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {

namespace {

absl::Status CheckHostPort(absl::string_view flag, const std::string& address) {
  auto colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", address, "' is not HOST:PORT"));
  }
  return absl::OkStatus();
}

absl::Status CannotListen(const std::string& address) {
  return absl::UnavailableError(absl::StrCat(
      "cannot listen on ", address, " (address in use, not local, or not permitted)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentServer>> AgentServer::Start(AgentServerConfig config) {
  RETURN_IF_ERROR(CheckHostPort("--listen", config.listen));
  if (!config.health_listen.empty()) {
    RETURN_IF_ERROR(CheckHostPort("--health-listen", config.health_listen));
  }
  ASSIGN_OR_RETURN(auto creds, rpc::MakeServerCredentials(config.tls));

  std::unique_ptr<AgentServer> s(new AgentServer());
  s->handler_ = std::make_unique<AgentHandler>(config.agent);
  // Fail at start-up, not at the first call, when --devices names a device
  // that is not there.
  if (auto info = s->handler_->GetNodeInfo({}); !info.ok()) return info.status();

  s->service_ = std::make_unique<GrpcAgentService>(*s->handler_);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, creds, &s->port_);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) return CannotListen(config.listen);
  if (!config.health_listen.empty()) {
    // Its own server: a plaintext port on the main server would expose the
    // Agent service without TLS. This one has only the default health service.
    grpc::ServerBuilder health;
    int health_port = 0;
    health.AddListeningPort(config.health_listen, grpc::InsecureServerCredentials(), &health_port);
    s->health_server_ = health.BuildAndStart();
    if (!s->health_server_ || health_port == 0) return CannotListen(config.health_listen);
    s->health_server_->GetHealthCheckService()->SetServingStatus(true);
    spdlog::info("health (grpc.health.v1 only, plaintext) on {}", config.health_listen);
  }
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info("agent listening on {} (port {}, {})", config.listen, s->port_,
               config.tls.insecure ? "PLAINTEXT"
               : config.tls.client_ca_file.empty() ? "TLS" : "mTLS");
  return s;
}

AgentServer::~AgentServer() { Shutdown(0); }

void AgentServer::Shutdown(int grace_ms) {
  if (!server_) return;
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (health_server_) {
    health_server_->GetHealthCheckService()->SetServingStatus(false);
    health_server_->Shutdown(std::chrono::system_clock::now());
    health_server_->Wait();
    health_server_.reset();
  }
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(grace_ms));
  server_->Wait();
  server_.reset();
}

void AgentServer::Wait() {
  if (server_) server_->Wait();
}

}  // namespace gdrbench::agent::service
