#include "controller/client/agent_channels.h"

#include <algorithm>

#include "common/status.h"

namespace gdrbench::controller {

size_t ChannelBound(uint32_t parallel) { return 4 * static_cast<size_t>(std::max<uint32_t>(parallel, 1)); }

absl::StatusOr<std::shared_ptr<AgentChannels>> MakeAgentChannels(const rpc::ClientTlsConfig& tls,
                                                                 size_t capacity) {
  GDR_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> creds, rpc::MakeChannelCredentials(tls));
  return std::make_shared<AgentChannels>(
      capacity, [tls, creds](const std::string& address) -> absl::StatusOr<std::unique_ptr<AgentChannel>> {
        auto c = std::make_unique<AgentChannel>();
        GDR_ASSIGN_OR_RETURN(c->channel, rpc::MakeChannel(address, tls, creds));
        c->stub = v1::Agent::NewStub(c->channel);
        return c;
      });
}

}  // namespace gdrbench::controller
