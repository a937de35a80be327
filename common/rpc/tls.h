// Transport security for agents, the CLI and the server. TLS is the default;
// plaintext only when `insecure` is set explicitly (and then logged).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace gdrbench::rpc {

// Who the client talks to: its name in messages, and the spelling of the
// flags that set the TLS toward it (the agents': --tls-ca, --insecure; the
// server's, the same with "server-": --server-tls-ca, --server-insecure).
enum class Peer { kAgent, kServer };
const char* PeerName(Peer peer);  // "agent", "gdrbench-server"

struct ServerTlsConfig {
  std::string cert_file;       // PEM server certificate (chain)
  std::string key_file;        // PEM private key
  std::string client_ca_file;  // set: mTLS, clients must present a cert signed by this CA
  bool insecure = false;       // plaintext; cert/key must then be empty
  Peer serving = Peer::kAgent;  // what is served, for the plaintext warning
};

struct ClientTlsConfig {
  std::string ca_file;         // PEM CA that signed the servers; empty = system roots
  std::string cert_file;       // client certificate for mTLS
  std::string key_file;
  std::string server_name;     // override the name checked in the server cert
  bool insecure = false;
  // Where each file was named, for its errors ("inv.yaml:7: tls.ca"); empty:
  // the --tls-ca / --tls-cert / --tls-key flag.
  std::string ca_from;
  std::string cert_from;
  std::string key_from;
  Peer peer = Peer::kAgent;  // who is at the other end
};

// The client flag `name` ("tls-ca", "tls-cert", "tls-key", "tls-server-name",
// "insecure") as the command line spells it for `config.peer`: "--tls-ca"
// toward agents, "--server-tls-ca" toward gdrbench-server.
std::string ClientFlag(const ClientTlsConfig& config, const char* name);

// INVALID_ARGUMENT naming the flag when the config is contradictory or
// incomplete; NOT_FOUND / PERMISSION_DENIED naming the file when unreadable.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsConfig& config);
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsConfig& config);

// INVALID_ARGUMENT naming the peer ("agent address 'h:' is not HOST:PORT")
// when `address` has no port.
absl::Status CheckAddress(const std::string& address, const ClientTlsConfig& config);
// A channel to `address` ("host:port"), validated: INVALID_ARGUMENT naming
// the peer ("agent address 'h:' is not HOST:PORT") when it has no port.
// `max_receive_bytes` > 0: the largest response the channel takes (gRPC's
// default: 4 MiB).
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientTlsConfig& config,
                                                           int max_receive_bytes = 0);
// The same with credentials made once (MakeChannelCredentials of `config`)
// for many channels: the files are read and checked, and gRPC's TLS context
// set up, once instead of once per channel.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientTlsConfig& config,
                                                           std::shared_ptr<grpc::ChannelCredentials> creds,
                                                           int max_receive_bytes = 0);

}  // namespace gdrbench::rpc
