#include "agent/service/authenticating_interceptor.h"

#include "grpcpp/server_context.h"

namespace gdrbench::agent::service {

grpc::experimental::Interceptor* AuthenticatingInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  // The call is bound to its connection before interceptors are created, so
  // peer() is known here ("ipv4:A:P"). A call exists only after the TLS
  // handshake, which with mTLS verified the client's certificate.
  if (info->server_context() != nullptr) on_call_(info->server_context()->peer());
  return nullptr;  // nothing to intercept
}

}  // namespace gdrbench::agent::service
