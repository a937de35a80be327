// TLS material checked locally, before any connection (issue 12, item 12):
// a certificate and a key that do not belong together, and a certificate
// outside its validity window, are named here rather than surfacing as a
// generic handshake failure (or "address in use") seconds later.
// Thread safety: pure functions over PEM text.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gdrbench::rpc {

// kReload: a server's replacement (SIGHUP), refused like a client's when
// outside its validity window: the one it serves with stays.
// The PEM file a flag names: NOT_FOUND / PERMISSION_DENIED "<flag>: cannot
// read <path>: ...", INVALID_ARGUMENT when it holds no PEM block
// (common/rpc/tls.cc).
absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path);

enum class CertUse { kServer, kClient, kReload };

// INVALID_ARGUMENT naming both flags when the key is not the certificate's
// (or either does not parse). A certificate that expired or is not valid
// yet is INVALID_ARGUMENT for a client and a reload; a server starting only
// warns (it keeps serving until SIGHUP brings the renewed one, and says so).
absl::Status CheckCertAndKey(const std::string& cert_flag, const std::string& cert_path,
                             const std::string& cert_pem, const std::string& key_flag,
                             const std::string& key_pem, CertUse use);

// "CN=agent1 (issued by CN=lab CA, valid until Dec  3 10:00:00 2026 GMT)"
// for the first certificate of `cert_pem`; "no certificate" when none.
std::string DescribeCert(const std::string& cert_pem);

}  // namespace gdrbench::rpc
