// The gRPC channels of a controller to its agents: one ConnectionCache
// (connection_cache.h) keyed by agent address, shared by every AgentClient
// of a fleet, with one set of TLS credentials (read and checked once, not
// once per agent).
// Thread safety: as ConnectionCache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/tls.h"
#include "controller/client/connection_cache.h"
#include "gdrbench/v1/agent.grpc.pb.h"
#include "grpcpp/channel.h"

namespace gdrbench::controller {

// One agent's channel (its TCP and TLS connection) and the stub over it.
struct AgentChannel {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Agent::Stub> stub;
};

using AgentChannels = ConnectionCache<AgentChannel>;

// The channels a controller running `parallel` pair tests (or preflights)
// at once holds: 4 x parallel. A test holds its two agents' channels through
// its calls (the target's while the initiator's stream runs), so 2 x
// parallel are in use at most; as many again stay open for later rounds
// (ConnectionCache's choice of which to close), since each reopening costs a
// TLS handshake and, with gRPC 1.51, a new TLS context (several ms of CPU).
size_t ChannelBound(uint32_t parallel);

// At most `capacity` channels open at once, all with `tls`. INVALID_ARGUMENT
// (or NOT_FOUND / PERMISSION_DENIED for an unreadable file) as
// rpc::MakeChannelCredentials; an address that is not HOST:PORT fails at
// Acquire, INVALID_ARGUMENT as rpc::MakeChannel.
absl::StatusOr<std::shared_ptr<AgentChannels>> MakeAgentChannels(const rpc::ClientTlsConfig& tls,
                                                                 size_t capacity);

}  // namespace gdrbench::controller
