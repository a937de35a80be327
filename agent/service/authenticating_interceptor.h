// A gRPC server interceptor factory that reports the peer of every call, so
// that the listener can count the connection it came on as authenticated
// (agent/service/admission.h). It adds no interceptor to the call itself.
//
// Thread safety: `on_call` runs on gRPC's threads, once per call, before the
// handler; it must be thread-safe and must outlive the server.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "grpcpp/support/server_interceptor.h"

namespace gdrbench::agent::service {

class AuthenticatingInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit AuthenticatingInterceptorFactory(std::function<void(const std::string& peer)> on_call)
      : on_call_(std::move(on_call)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  std::function<void(const std::string&)> on_call_;
};

}  // namespace gdrbench::agent::service
