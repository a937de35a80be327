#include "server/api/server.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/listen_address.h"
#include "common/status.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

absl::StatusOr<std::unique_ptr<ControllerServer>> ControllerServer::Start(ServerConfig config) {
  // Before anything binds: gRPC would take port 70000 as 70000 - 65536.
  GDR_RETURN_IF_ERROR(ParseListenAddress("--grpc-listen", config.grpc_listen).status());
  GDR_RETURN_IF_ERROR(ParseListenAddress("--http-listen", config.http.listen).status());
  std::unique_ptr<ControllerServer> s(new ControllerServer());
  if (config.insecure && config.tokens_file.empty()) {
    spdlog::warn("--insecure without --tokens: every caller may read and write");
    s->auth_ = Authorizer::AllowAll();
  } else if (config.tokens_file.empty()) {
    return absl::InvalidArgumentError("--tokens FILE is required (bearer tokens, 'ROLE TOKEN [NAME]' lines); "
                                      "only --insecure may run without");
  } else {
    GDR_ASSIGN_OR_RETURN(s->auth_, Authorizer::Load(config.tokens_file));
  }
  if (config.insecure) {
    config.grpc_tls.insecure = true;
    config.http.insecure = true;
  }
  config.grpc_tls.serving = rpc::Peer::kServer;
  GDR_ASSIGN_OR_RETURN(s->grpc_tls_, rpc::ReloadableServerTls::Create(config.grpc_tls));
  std::shared_ptr<grpc::ServerCredentials> creds = s->grpc_tls_->credentials();
  GDR_ASSIGN_OR_RETURN(s->store_, store::Store::Open(config.db));
  spdlog::info("store: {}", s->store_->name());
  ControllerServer* self = s.get();
  s->sweeps_ = std::make_unique<sweeps::SweepManager>(
      config.executor.get(), [self](const v1::Run& run) { return self->handler_->StoreRun(run); },
      config.max_queued_sweeps);
  s->handler_ = std::make_unique<Handler>(*s->store_, *s->sweeps_, config.handler);
  if (config.executor) {
    config.executor->SetLinkReferences(
        [self](const v1::GetLinkReferencesRequest& req) { return self->handler_->GetLinkReferences(req); });
  }
  s->exporter_ = std::make_unique<metrics::Exporter>(*s->store_, *s->sweeps_, s->counters_,
                                                  config.persist_runs);
  s->service_ = std::make_unique<GrpcControllerService>(*s->handler_, s->auth_,
                                                        std::chrono::seconds(config.upload_idle_seconds));
  s->live_service_ = std::make_unique<GrpcLiveRunsService>(*s->handler_, s->auth_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.grpc_listen, creds, &s->grpc_port_);
  builder.RegisterService(s->service_.get());
  builder.RegisterService(s->live_service_.get());
  builder.SetMaxReceiveMessageSize(64 << 20);  // a RunChunk is ~0.5 MB; a whole small run as JSON is HTTP's
  builder.SetMaxSendMessageSize(64 << 20);
  s->grpc_ = builder.BuildAndStart();
  if (!s->grpc_ || s->grpc_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.grpc_listen, " (gRPC)"));
  }
  s->grpc_->GetHealthCheckService()->SetServingStatus(true);
  if (config.grpc_tls.insecure) spdlog::warn("gRPC on port {} is plaintext (--insecure)", s->grpc_port_);
  spdlog::info("gRPC API on port {}{}", s->grpc_port_,
               config.grpc_tls.insecure ? "" : (config.grpc_tls.client_ca_file.empty() ? " (TLS)" : " (mTLS)"));
  GDR_ASSIGN_OR_RETURN(s->http_,
                       HttpServer::Start(config.http, *s->handler_, s->auth_, *s->exporter_, s->counters_));
  s->config_ = std::move(config);
  // The executor moved with the config: the manager keeps its pointer valid.
  if (s->config_.keep_days > 0) s->retention_ = std::thread([p = s.get()] { p->Retention(); });
  return s;
}

void ControllerServer::Retention() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    l.unlock();
    const int64_t cutoff = store::NowMicros() - int64_t{config_.keep_days} * 86400 * 1000000;
    auto n = store_->DeleteRunsBefore(cutoff);
    if (!n.ok()) {
      spdlog::warn("retention: {}", std::string(n.status().message()));
    } else if (*n > 0) {
      spdlog::info("retention: deleted {} run(s) older than {} days (baselines kept)", *n, config_.keep_days);
    }
    l.lock();
    if (stop_cv_.wait_for(l, std::chrono::hours(1), [&] { return stopping_; })) return;
  }
}

ControllerServer::TlsReload ControllerServer::ReloadTls() {
  return TlsReload{grpc_tls_->Reload(), http_->ReloadTls()};
}

void ControllerServer::Shutdown(int grace_ms) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(grace_ms);
  if (handler_) handler_->StartDraining();  // new uploads refused from here, whatever the listeners do
  const int uploads = service_ ? service_->uploads_in_flight() : 0;
  if (grace_ms > 0) {
    spdlog::info("draining: new calls refused; {} gRPC upload(s) in flight get up to {} s", uploads,
                 grace_ms / 1000.0);
  }
  // gRPC first, on its own thread: its listener closes now, so nothing new
  // starts while the rest stops.
  std::thread grpc_drain;
  if (grpc_) {
    grpc_->GetHealthCheckService()->SetServingStatus(false);
    grpc_drain = std::thread([this, deadline] { grpc_->Shutdown(deadline); });
  }
  if (sweeps_) sweeps_->Stop();  // cancels a running sweep, ends watchers
  // Closes its listener; requests in flight get until the deadline.
  if (http_) http_->Stop(t0 + std::chrono::milliseconds(grace_ms));
  if (grpc_drain.joinable()) grpc_drain.join();
  if (retention_.joinable()) retention_.join();
  sweeps_.reset();
  if (grace_ms > 0) {
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (std::chrono::system_clock::now() >= deadline) {
      spdlog::warn("drained in {:.1f} s: calls still running at the {} s deadline were cancelled (an "
                   "unfinished upload stores nothing)", took, grace_ms / 1000.0);
    } else {
      spdlog::info("drained in {:.1f} s", took);
    }
  }
}

ControllerServer::~ControllerServer() { Shutdown(0); }

}  // namespace gdrbench::server::api
