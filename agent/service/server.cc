#include "agent/service/server.h"

#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/service/listener.h"
#include "common/limits.h"
#include "common/status.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/resource_quota.h"
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

// The limits of common/limits.h that gRPC enforces.
void ApplyLimits(grpc::ServerBuilder& b) {
  grpc::ResourceQuota quota("gdrbench-agent");
  quota.Resize(limits::kGrpcMemoryBytes);
  b.SetResourceQuota(quota);
  b.SetMaxReceiveMessageSize(limits::kMaxRequestBytes);
  b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits::kMaxConcurrentStreams);
  b.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, limits::kHandshakeTimeoutMs);
  b.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, limits::kMaxConnectionIdleMs);
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
  ASSIGN_OR_RETURN(auto tls, rpc::ReloadableServerTls::Create(config.tls));

  if (struct stat st; stat(config.agent.fs_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("--fs-root ", config.agent.fs_root, " is not a directory"));
  }
  std::unique_ptr<AgentServer> s(new AgentServer());
  s->tls_ = std::move(tls);
  s->handler_ = config.make_handler ? config.make_handler(config.agent)
                                    : std::make_unique<AgentHandler>(config.agent);
  // Fail at start-up, not at the first call, when --devices names a device
  // that is not there.
  if (auto info = s->handler_->GetNodeInfo({}); !info.ok()) return info.status();

  // Our own listener: no SO_REUSEPORT, an accept loop that survives EMFILE.
  ASSIGN_OR_RETURN(s->listener_, Listener::Bind(config.listen));
  s->port_ = s->listener_->port();
  s->service_ = std::make_unique<GrpcAgentService>(*s->handler_, config.preflight);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, s->tls_->credentials());
  builder.RegisterService(s->service_.get());
  ApplyLimits(builder);
  s->server_ = builder.BuildAndStart();
  if (!s->server_) return absl::InternalError("the gRPC server did not start");
  s->listener_->Start(std::move(acceptor));
  if (!config.health_listen.empty()) {
    // Its own server: a plaintext port on the main server would expose the
    // Agent service without TLS. This one has only the default health service.
    grpc::ServerBuilder health;
    int health_port = 0;
    health.AddListeningPort(config.health_listen, grpc::InsecureServerCredentials(), &health_port);
    health.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a port in use is an error
    ApplyLimits(health);
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
  std::lock_guard lock(shutdown_mu_);  // Drain's thread and the destructor
  if (!server_) return;
  if (listener_) listener_->Stop();  // no new connections
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

bool AgentServer::Drain(int deadline_ms) {
  if (!server_) return true;
  // Shutdown waits for every call's handler to return, and one stuck in the
  // kernel never does: it runs on its own thread, bounded here.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<State>();
  std::thread([this, state, deadline_ms] {
    Shutdown(deadline_ms / 2);  // calls past half the bound are cancelled
    std::lock_guard lock(state->mu);
    state->done = true;
    state->cv.notify_all();
  }).detach();
  std::unique_lock lock(state->mu);
  return state->cv.wait_for(lock, std::chrono::milliseconds(deadline_ms), [&] { return state->done; });
}

void AgentServer::Wait() {
  if (server_) server_->Wait();
}

}  // namespace gdrbench::agent::service
