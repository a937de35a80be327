// A server's TLS material that SIGHUP replaces while it serves (issue 12,
// item 12): certificate renewals (cert-manager, certbot, an operator) need no
// restart and drop no call. gRPC's credentials read the certificate, key and
// client CA from private in-memory files (memfd, reached as /proc/self/fd/N;
// the key never touches a disk) that gRPC's FileWatcherCertificateProvider
// re-reads every second. Reload() reads the configured files again, checks
// them as at start, and only then swaps the private copies: with a bad
// replacement the server keeps serving with what it has.
// Thread safety: Reload may be called from any thread (one at a time).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/tls.h"
#include "grpcpp/security/server_credentials.h"

namespace grpc::experimental {
class FileWatcherCertificateProvider;
}

namespace gdrbench::rpc {

class ReloadableServerTls {
 public:
  // As MakeServerCredentials: INVALID_ARGUMENT naming the flag, NOT_FOUND /
  // PERMISSION_DENIED naming the file; INTERNAL when no memfd can be made.
  static absl::StatusOr<std::unique_ptr<ReloadableServerTls>> Create(const ServerTlsConfig& config);
  ~ReloadableServerTls();

  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }

  // Reads --tls-cert, --tls-key (and --tls-client-ca) again. The line to log:
  // OK "TLS reloaded: serving CN=... (issued by ..., valid until ...)", new
  // connections get it within a second; otherwise the reason, and the
  // material in use stays (INVALID_ARGUMENT, NOT_FOUND, ... as Create; a
  // certificate outside its validity window too). FAILED_PRECONDITION for a
  // plaintext server.
  absl::StatusOr<std::string> Reload();

 private:
  ReloadableServerTls() = default;

  ServerTlsConfig config_;
  std::mutex mu_;
  int identity_fd_ = -1;  // the certificate chain, then the key: one file, swapped at once
  int ca_fd_ = -1;
  std::shared_ptr<grpc::experimental::FileWatcherCertificateProvider> provider_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

}  // namespace gdrbench::rpc
