// TLS material checked locally, before any connection (issue 12, item 12):
// a certificate and a key that do not belong together, and a certificate
// outside its validity window, are named here rather than surfacing as a
// generic handshake failure (or "address in use") seconds later.
// Thread safety: pure functions over PEM text.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gdrbench::rpc {

enum class CertUse { kServer, kClient };

// INVALID_ARGUMENT naming both flags when the key is not the certificate's
// (or either does not parse). A certificate that expired or is not valid
// yet is INVALID_ARGUMENT for a client; a server only warns (it keeps
// serving until SIGHUP brings the renewed one, and says so).
absl::Status CheckCertAndKey(const std::string& cert_flag, const std::string& cert_path,
                             const std::string& cert_pem, const std::string& key_flag,
                             const std::string& key_pem, CertUse use);

}  // namespace gdrbench::rpc
