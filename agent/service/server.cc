#include "agent/service/server.h"

#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/service/authenticating_interceptor.h"
#include "agent/service/listener.h"
#include "common/limits.h"
#include "common/listen_address.h"
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
  return ParseListenAddress(flag, address).status();
}

constexpr int64_t kHandshakeBackstopMs = 2'000;

// The limits of common/limits.h that gRPC enforces.
void ApplyLimits(grpc::ServerBuilder& b, std::chrono::milliseconds handshake_deadline) {
  grpc::ResourceQuota quota("gdrbench-agent");
  quota.Resize(limits::kGrpcMemoryBytes);
  b.SetResourceQuota(quota);
  b.SetMaxReceiveMessageSize(limits::kMaxRequestBytes);
  b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits::kMaxConcurrentStreams);
  // A backstop only: the listener closes a connection without a call at the
  // deadline itself, quietly (gRPC logs each handshake it times out).
  b.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                       static_cast<int>(handshake_deadline.count() + kHandshakeBackstopMs));
  b.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, limits::kMaxConnectionIdleMs);
}

// The admission of both ports; INVALID_ARGUMENT when the flags are out of
// range or their unauthenticated budgets leave authenticated connections
// less than half of limits::kMaxConnections.
absl::StatusOr<std::pair<Admission, Admission>> MakeAdmissions(const AdmissionConfig& main) {
  auto now = std::chrono::steady_clock::now();
  GDR_ASSIGN_OR_RETURN(Admission agent, Admission::Create(main, now));
  AdmissionConfig h;  // no --controller-cidr pool: probes come from the node
  h.handshake_deadline = main.handshake_deadline;
  h.per_address = limits::kHealthPerAddress;
  h.total = limits::kHealthTotal;
  h.log_interval = main.log_interval;
  h.port_name = "health port";
  GDR_ASSIGN_OR_RETURN(Admission health, Admission::Create(h, now));
  int pools = main.controller_cidrs.empty() ? 1 : 2;
  int most = limits::kMaxConnections / limits::kMaxUnauthenticatedShareDivisor;
  if (main.total * pools + h.total > most) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--unauthenticated-total ", main.total, pools == 2 ? " (twice: --controller-cidr has its own pool)" : "",
        " and the health port's ", h.total, " exceed ", most,
        ", the half of the agent's connections kept for authenticated ones"));
  }
  return std::make_pair(std::move(agent), std::move(health));
}

std::string DescribeAdmission(const AdmissionConfig& a) {
  std::vector<std::string> cidrs;
  for (const Cidr& c : a.controller_cidrs) cidrs.push_back(c.text());
  return absl::StrCat("unauthenticated connections: ", a.handshake_deadline.count() / 1000.0,
                      " s to make a call, ", a.per_address, " per address, ", a.total, " in total",
                      cidrs.empty() ? "" : absl::StrCat("; ", a.total, " more for --controller-cidr ",
                                                         absl::StrJoin(cidrs, ",")));
}

}  // namespace

// Its own server and listener: a plaintext port on the main server would
// expose the Agent service without TLS. This one has only the default
// health service, and every connection on it stays unauthenticated (a
// probe makes one call and closes), under the health budgets.
absl::Status AgentServer::StartHealth(const std::string& address, Admission admission,
                                      std::chrono::milliseconds handshake_deadline) {
  GDR_ASSIGN_OR_RETURN(health_listener_, Listener::Bind(address));
  grpc::ServerBuilder health;
  auto acceptor = health.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      grpc::InsecureServerCredentials());
  ApplyLimits(health, handshake_deadline);
  health_server_ = health.BuildAndStart();
  if (!health_server_) return absl::InternalError("the health gRPC server did not start");
  health_listener_->Start(std::move(acceptor), std::move(admission));
  health_server_->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info("health (grpc.health.v1 only, plaintext) on {} (port {})", address, health_listener_->port());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AgentServer>> AgentServer::Start(AgentServerConfig config) {
  GDR_RETURN_IF_ERROR(CheckHostPort("--listen", config.listen));
  if (!config.health_listen.empty()) {
    GDR_RETURN_IF_ERROR(CheckHostPort("--health-listen", config.health_listen));
  }
  GDR_ASSIGN_OR_RETURN(auto tls, rpc::ReloadableServerTls::Create(config.tls));

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

  GDR_ASSIGN_OR_RETURN(auto admissions, MakeAdmissions(config.admission));
  // Our own listener: no SO_REUSEPORT, an accept loop that survives EMFILE.
  GDR_ASSIGN_OR_RETURN(s->listener_, Listener::Bind(config.listen));
  s->port_ = s->listener_->port();
  s->service_ = std::make_unique<GrpcAgentService>(*s->handler_, config.preflight);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, s->tls_->credentials());
  builder.RegisterService(s->service_.get());
  // Every call marks its connection authenticated (admission.h).
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> hooks;
  hooks.push_back(std::make_unique<AuthenticatingInterceptorFactory>(
      [listener = s->listener_.get()](const std::string& peer) { listener->Authenticate(peer); }));
  builder.experimental().SetInterceptorCreators(std::move(hooks));
  ApplyLimits(builder, config.admission.handshake_deadline);
  s->server_ = builder.BuildAndStart();
  if (!s->server_) return absl::InternalError("the gRPC server did not start");
  s->listener_->Start(std::move(acceptor), std::move(admissions.first));
  if (!config.health_listen.empty()) {
    GDR_RETURN_IF_ERROR(s->StartHealth(config.health_listen, std::move(admissions.second),
                                       config.admission.handshake_deadline));
  }
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info("agent listening on {} (port {}, {}); {}", config.listen, s->port_,
               config.tls.insecure ? "PLAINTEXT"
               : config.tls.client_ca_file.empty() ? "TLS" : "mTLS",
               DescribeAdmission(config.admission));
  return s;
}

AgentServer::~AgentServer() { Shutdown(0); }

void AgentServer::Shutdown(int grace_ms) {
  std::lock_guard lock(shutdown_mu_);  // Drain's thread and the destructor
  if (!server_) return;
  if (listener_) listener_->Stop();  // no new connections
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (health_listener_) health_listener_->Stop();
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
