// Why a connection to a TLS server fails (issue 12, item 12). gRPC reports
// a refused handshake only as "unavailable"; this makes one handshake of its
// own with the same material (OpenSSL, the library gRPC uses here) and names
// the cause: the server's certificate signed by a CA we do not trust, expired,
// not valid yet, issued for another name; our client certificate refused by
// the server (unknown CA, expired, missing); a server that does not speak TLS,
// or one that does when we speak plaintext.
// Thread safety: a pure function (one socket of its own per call).
#pragma once

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "common/rpc/tls.h"

namespace gdrbench::rpc {

// OK when a TLS session with `address` (HOST:PORT) comes up with `config`
// and the server then speaks HTTP/2: the failure was not TLS. Otherwise one
// sentence naming the cause: FAILED_PRECONDITION for a TLS mismatch (the
// material of one side is wrong), UNAVAILABLE when nothing accepts a TCP
// connection within `timeout` or the server closes it. With
// `config.insecure` it checks only whether the server wants TLS.
absl::Status ProbeTls(const std::string& address, const ClientTlsConfig& config,
                      std::chrono::milliseconds timeout);

}  // namespace gdrbench::rpc
