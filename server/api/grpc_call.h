// What every gRPC service of gdrbench-server does around a call: who calls
// (the bearer token of the call's metadata, checked for a role; a refusal
// logged with the peer) and the answer of a handler turned into gRPC's.
#pragma once

#include <utility>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "absl/status/statusor.h"
#include "common/rpc/status.h"
#include "server/api/auth.h"

namespace gdrbench::server::api {

// The caller of `ctx` if its token has `needed`; the refusal is logged.
absl::StatusOr<Principal> GrpcCaller(const Authorizer& auth, grpc::ServerContext* ctx, Role needed);

// `r`'s value into `out`, or its status as gRPC's.
template <typename T>
grpc::Status GrpcReply(absl::StatusOr<T> r, T* out) {
  if (!r.ok()) return rpc::ToGrpc(r.status());
  *out = std::move(*r);
  return grpc::Status::OK;
}

}  // namespace gdrbench::server::api

// In a service method with `ctx` and a Caller(ctx, role) member: `who`, or
// the refusal returned.
#define GDR_CALLER(role)        \
  auto who = Caller(ctx, role); \
  if (!who.ok()) return ::gdrbench::rpc::ToGrpc(who.status())
