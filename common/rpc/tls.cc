#include "common/rpc/tls.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/fs_root.h"
#include "common/rpc/cert_check.h"
#include "common/status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "spdlog/spdlog.h"

namespace gdrbench::rpc {

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  auto content = FsRoot("/").ReadFile(path);
  if (!content.ok()) {
    return absl::Status(content.status().code(),
                        absl::StrCat(flag, ": cannot read ", path, ": ", content.status().message()));
  }
  if (!absl::StrContains(*content, "-----BEGIN")) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return content;
}

const char* PeerName(Peer peer) { return peer == Peer::kServer ? "gdrbench-server" : "agent"; }

std::string ClientFlag(const ClientTlsConfig& config, const char* name) {
  return absl::StrCat("--", config.peer == Peer::kServer ? "server-" : "", name);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsConfig& config) {
  if (config.insecure) {
    if (!config.cert_file.empty() || !config.key_file.empty() || !config.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--insecure cannot be combined with --tls-cert, --tls-key or --tls-client-ca");
    }
    spdlog::warn(
        "serving PLAINTEXT (--insecure): anyone who can reach this port can {}; use "
        "--tls-cert/--tls-key (and --tls-client-ca for mTLS) in production",
        config.serving == Peer::kServer ? "call this server (its --tokens still apply)" : "drive this agent");
    return grpc::InsecureServerCredentials();
  }
  if (config.cert_file.empty() || config.key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS is the default: give --tls-cert and --tls-key (and --tls-client-ca for mTLS), "
        "or --insecure for plaintext");
  }
  grpc::SslServerCredentialsOptions opts(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  GDR_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem("--tls-cert", config.cert_file));
  GDR_ASSIGN_OR_RETURN(pair.private_key, ReadPem("--tls-key", config.key_file));
  GDR_RETURN_IF_ERROR(CheckCertAndKey("--tls-cert", config.cert_file, pair.cert_chain, "--tls-key",
                                      pair.private_key, CertUse::kServer));
  opts.pem_key_cert_pairs.push_back(std::move(pair));
  if (!config.client_ca_file.empty()) {
    GDR_ASSIGN_OR_RETURN(opts.pem_root_certs, ReadPem("--tls-client-ca", config.client_ca_file));
    opts.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(opts);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsConfig& config) {
  if (config.insecure) {
    if (!config.ca_file.empty() || !config.cert_file.empty() || !config.key_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ClientFlag(config, "insecure"), " cannot be combined with ", ClientFlag(config, "tls-ca"), ", ",
          ClientFlag(config, "tls-cert"), " or ", ClientFlag(config, "tls-key")));
    }
    return grpc::InsecureChannelCredentials();
  }
  const std::string ca = config.ca_from.empty() ? ClientFlag(config, "tls-ca") : config.ca_from;
  const std::string cert = config.cert_from.empty() ? ClientFlag(config, "tls-cert") : config.cert_from;
  const std::string key = config.key_from.empty() ? ClientFlag(config, "tls-key") : config.key_from;
  if (config.cert_file.empty() != config.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(cert, " and ", key, " go together (mTLS client identity)"));
  }
  grpc::SslCredentialsOptions opts;
  if (!config.ca_file.empty()) {
    GDR_ASSIGN_OR_RETURN(opts.pem_root_certs, ReadPem(ca, config.ca_file));
  }
  if (!config.cert_file.empty()) {
    GDR_ASSIGN_OR_RETURN(opts.pem_cert_chain, ReadPem(cert, config.cert_file));
    GDR_ASSIGN_OR_RETURN(opts.pem_private_key, ReadPem(key, config.key_file));
    GDR_RETURN_IF_ERROR(CheckCertAndKey(cert, config.cert_file, opts.pem_cert_chain, key,
                                        opts.pem_private_key, CertUse::kClient));
  }
  return grpc::SslCredentials(opts);
}

absl::Status CheckAddress(const std::string& address, const ClientTlsConfig& config) {
  auto colon = address.rfind(':');
  uint32_t port = 0;
  if (address.empty() || colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(PeerName(config.peer), " address '", address, "' is not HOST:PORT"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientTlsConfig& config,
                                                           int max_receive_bytes) {
  GDR_RETURN_IF_ERROR(CheckAddress(address, config));
  GDR_ASSIGN_OR_RETURN(auto creds, MakeChannelCredentials(config));
  return MakeChannel(address, config, std::move(creds), max_receive_bytes);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientTlsConfig& config,
                                                           std::shared_ptr<grpc::ChannelCredentials> creds,
                                                           int max_receive_bytes) {
  GDR_RETURN_IF_ERROR(CheckAddress(address, config));
  grpc::ChannelArguments args;
  if (!config.server_name.empty()) args.SetSslTargetNameOverride(config.server_name);
  // Fail fast when nothing listens: operators get one line, not a long backoff.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  if (max_receive_bytes > 0) args.SetMaxReceiveMessageSize(max_receive_bytes);
  return grpc::CreateCustomChannel(address, creds, args);
}

}  // namespace gdrbench::rpc
