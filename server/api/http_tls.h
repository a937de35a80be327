// The HTTP side's certificate and key, replaced by SIGHUP while the server
// serves (issue 12, item 3: cert-manager and certbot renew certificates of
// long-running servers). cpp-httplib's SSLServer loads its files once; this
// serves every new handshake from the material in memory (OpenSSL's cert
// callback, SSL_CTX_set_cert_cb), which Reload() replaces only after the new
// files were read and checked as at start (the key is the certificate's, the
// certificate is inside its validity window): with a bad replacement the
// server keeps serving the one it has. Connections already open keep theirs.
// Thread safety: Reload from any thread (one at a time); handshakes read the
// current material under a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace gdrbench::server::api {

class HttpTlsIdentity {
 public:
  // NOT_FOUND / PERMISSION_DENIED naming the file, INVALID_ARGUMENT when the
  // PEM does not parse or the key is not the certificate's.
  static absl::StatusOr<std::unique_ptr<HttpTlsIdentity>> Load(const std::string& cert_file,
                                                               const std::string& key_file);
  ~HttpTlsIdentity();

  // Sets `ctx` up as the HTTP side's server context: TLS 1.2 or later, no
  // compression, the loaded certificate and key, and every new handshake
  // served from this identity's current material. `ctx` must not outlive it.
  // INTERNAL naming the OpenSSL call when one fails.
  absl::Status Install(SSL_CTX* ctx);

  // Reads the two files again. OK: "TLS reloaded: serving CN=... (issued by
  // ..., valid until ...) to new connections"; otherwise why, and the
  // material in use stays.
  absl::StatusOr<std::string> Reload();

  struct Material;

 private:
  HttpTlsIdentity() = default;
  std::shared_ptr<const Material> Current();

  std::string cert_file_, key_file_;
  std::mutex mu_;
  std::shared_ptr<const Material> current_;
};

}  // namespace gdrbench::server::api
