#include "common/rpc/tls_probe.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/rpc/x509_text.h"
#include "common/unique_fd.h"

namespace gdrbench::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// SSL_write on a socket the server closed raises SIGPIPE, which would end
// the CLI (exit 141) instead of letting it say why: blocked on this thread
// for the probe, and the one it raised taken back.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    timespec now{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &now) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
};

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

bool SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  return true;
}

// A connected non-blocking TCP socket, or UNAVAILABLE naming why none.
absl::Status Connect(const std::string& address, const std::string& host, const std::string& port,
                     Clock::time_point deadline, UniqueFd* out) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list); rc != 0) {
    return absl::UnavailableError(absl::StrCat(host, " does not resolve: ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(list, freeaddrinfo);
  int err = ETIMEDOUT;
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    UniqueFd s(socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (s.get() < 0) continue;
    if (connect(s.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        err = errno;
        continue;
      }
      pollfd p{s.get(), POLLOUT, 0};
      if (poll(&p, 1, MsLeft(deadline)) != 1) {
        err = ETIMEDOUT;
        continue;
      }
      socklen_t len = sizeof(err);
      getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) continue;
    }
    *out = std::move(s);
    return absl::OkStatus();
  }
  if (err == ETIMEDOUT) {
    return absl::UnavailableError(absl::StrCat("no answer to a TCP connection to ", address,
                                               ": timed out (the host is down, or a firewall drops it)"));
  }
  return absl::UnavailableError(absl::StrCat("nothing accepts TCP connections on ", address, ": ",
                                             std::strerror(err)));
}

// One step of a non-blocking SSL call: true to retry it (the socket is
// ready), false when it failed or the deadline passed.
bool Retry(SSL* ssl, int rc, int fd, Clock::time_point deadline) {
  int e = SSL_get_error(ssl, rc);
  if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return false;
  pollfd p{fd, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
  return poll(&p, 1, MsLeft(deadline)) == 1;
}

std::string Subject(X509* c) { return NameText(X509_get_subject_name(c)); }

std::string AltNames(X509* c) {
  std::vector<std::string> names;
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(c, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
    if (g->type == GEN_DNS) {
      names.push_back(absl::StrCat("DNS:", reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName))));
    } else if (g->type == GEN_IPADD && g->d.iPAddress->length == 4) {
      char buf[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, ASN1_STRING_get0_data(g->d.iPAddress), buf, sizeof(buf));
      names.push_back(absl::StrCat("IP:", buf));
    }
  }
  GENERAL_NAMES_free(sans);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

std::string TrustedBy(const ClientTlsConfig& c) {
  const std::string flag = ClientFlag(c, "tls-ca");
  return c.ca_file.empty() ? absl::StrCat("the system's CAs (no ", flag, " given)")
                           : absl::StrCat(flag, " ", c.ca_file);
}

// The server's certificate failed our verification with `code`.
std::string ServerCertProblem(long code, X509* peer, const ClientTlsConfig& c, const std::string& host) {
  const std::string who = absl::StrCat("the server's certificate (", Subject(peer), ")");
  switch (code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return absl::StrCat(who, " expired on ", TimeText(X509_get0_notAfter(peer)),
                          ": renew it (gdrbench-agent reloads it on SIGHUP)");
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return absl::StrCat(who, " is not valid before ", TimeText(X509_get0_notBefore(peer)),
                          ": check the clocks of both hosts");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      return absl::StrCat(who, " is issued by ", NameText(X509_get_issuer_name(peer)), ", a CA that ",
                          TrustedBy(c), " does not hold (a foreign CA)");
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return absl::StrCat(who, " is not for ", host, " (it names ", AltNames(peer), "); ",
                          ClientFlag(c, "tls-server-name"), " sets the name checked");
    default:
      return absl::StrCat(who, " was refused: ", X509_verify_cert_error_string(code));
  }
}

// The server ended the handshake or the session with an alert (it refused
// our certificate, or has none of its own to show), or spoke no TLS at all.
std::string ServerRefusal(unsigned long err, const ClientTlsConfig& c) {
  const std::string ours =
      c.cert_file.empty() ? "" : absl::StrCat(" (", ClientFlag(c, "tls-cert"), " ", c.cert_file, ")");
  const std::string give_cert =
      absl::StrCat("give ", ClientFlag(c, "tls-cert"), " and ", ClientFlag(c, "tls-key"));
  switch (ERR_GET_REASON(err)) {
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      return absl::StrCat("the server refused this client's certificate", ours,
                          ": it is signed by a CA the server does not trust (its --tls-client-ca)");
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      return absl::StrCat("the server refused this client's certificate", ours, ": expired");
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      return absl::StrCat("the server refused this client's certificate", ours);
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      return absl::StrCat("the server requires a client certificate (mTLS): ", give_cert);
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
      return c.cert_file.empty()
                 ? absl::StrCat(
                       "the server refused the handshake: it may require a client certificate (mTLS): ",
                       give_cert)
                 : absl::StrCat("the server refused the handshake with this client's certificate", ours);
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
      return absl::StrCat("the server does not speak TLS (started with --insecure?): talk to it with ",
                          ClientFlag(c, "insecure"));
    case SSL_R_UNEXPECTED_EOF_WHILE_READING:
      return "the server closed the connection in the TLS handshake: it may not speak TLS (started "
             "with --insecure?)";
    default: {
      char buf[256];
      ERR_error_string_n(err, buf, sizeof(buf));
      return absl::StrCat("the TLS handshake failed: ", buf);
    }
  }
}

absl::Status Mismatch(const std::string& address, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("TLS with ", address, ": ", why));
}

// The client side of one session with the same material as gRPC's.
std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> MakeContext(const ClientTlsConfig& c) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) return ctx;
  // Verified after the handshake, so that a server refusing *our*
  // certificate is seen too (verification still runs and is recorded).
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  if (c.ca_file.empty()) {
    SSL_CTX_set_default_verify_paths(ctx.get());
  } else {
    SSL_CTX_load_verify_locations(ctx.get(), c.ca_file.c_str(), nullptr);
  }
  if (!c.cert_file.empty() && !c.key_file.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx.get(), c.cert_file.c_str());
    SSL_CTX_use_PrivateKey_file(ctx.get(), c.key_file.c_str(), SSL_FILETYPE_PEM);
  }
  static const unsigned char kH2[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kH2, sizeof(kH2));
  return ctx;
}

}  // namespace

absl::Status ProbeTls(const std::string& address, const ClientTlsConfig& config,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  SigpipeBlocked no_sigpipe;
  std::string host, port;
  if (!SplitHostPort(address, &host, &port)) return absl::OkStatus();  // MakeChannel says why
  UniqueFd sock;
  if (absl::Status st = Connect(address, host, port, deadline, &sock); !st.ok()) return st;

  auto ctx = MakeContext(config);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(ctx ? SSL_new(ctx.get()) : nullptr, SSL_free);
  if (!ssl) return absl::OkStatus();  // nothing to say
  const std::string name = config.server_name.empty() ? host : config.server_name;
  in6_addr ip;
  const bool is_ip = inet_pton(AF_INET, name.c_str(), &ip) == 1 || inet_pton(AF_INET6, name.c_str(), &ip) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl.get(), name.c_str());
    X509_VERIFY_PARAM_set1_host(SSL_get0_param(ssl.get()), name.c_str(), 0);
  }
  SSL_set_fd(ssl.get(), sock.get());
  ERR_clear_error();
  int rc;
  while ((rc = SSL_connect(ssl.get())) != 1 && Retry(ssl.get(), rc, sock.get(), deadline)) {
  }
  if (config.insecure) {
    if (rc == 1) {
      return Mismatch(
          address,
          absl::StrCat("the server speaks TLS and this client plaintext (", ClientFlag(config, "insecure"),
                       "): give ", ClientFlag(config, "tls-ca"), " (and ", ClientFlag(config, "tls-cert"),
                       "/", ClientFlag(config, "tls-key"), " when the server wants mTLS) instead"));
    }
    return absl::OkStatus();
  }
  if (rc != 1) {
    if (unsigned long err = ERR_peek_last_error(); err != 0) return Mismatch(address, ServerRefusal(err, config));
    if (MsLeft(deadline) == 0) {
      return absl::UnavailableError(absl::StrCat(
          address, " accepted a TCP connection but answered no TLS handshake: ", "timed out after ",
          timeout.count(), " ms (the agent is hung, or it or this host is overloaded)"));
    }
    return absl::UnavailableError(absl::StrCat(address, " closed the connection during the TLS handshake"));
  }
  std::unique_ptr<X509, decltype(&X509_free)> peer(SSL_get1_peer_certificate(ssl.get()), X509_free);
  if (long v = SSL_get_verify_result(ssl.get()); v != X509_V_OK && peer) {
    return Mismatch(address, ServerCertProblem(v, peer.get(), config, name));
  }
  // TLS 1.3: a server refusing our certificate says so after our handshake
  // ends: read first (its alert, or the SETTINGS a gRPC server sends at
  // once); a server that waits for the client speaks after HTTP/2's preface
  // and an empty SETTINGS frame.
  // What the server's answer after our good handshake says; OK when it spoke.
  auto answered = [&](int rc) -> absl::Status {
    if (rc > 0) return absl::OkStatus();
    const unsigned long err = ERR_peek_last_error();
    if (err != 0 && ERR_GET_REASON(err) != SSL_R_UNEXPECTED_EOF_WHILE_READING) {
      return Mismatch(address, ServerRefusal(err, config));
    }
    const int e = SSL_get_error(ssl.get(), rc);
    if (e != SSL_ERROR_SSL && e != SSL_ERROR_ZERO_RETURN && e != SSL_ERROR_SYSCALL) return absl::OkStatus();
    // Closed without an alert right after a handshake that succeeded: a TLS
    // server (gRPC's does so) that refused this client's certificate.
    return Mismatch(address,
                    config.cert_file.empty()
                        ? absl::StrCat("the server ended the session right after the TLS handshake: it "
                                       "requires a client certificate (mTLS): give ",
                                       ClientFlag(config, "tls-cert"), " and ", ClientFlag(config, "tls-key"))
                        : absl::StrCat("the server ended the session right after the TLS handshake: it "
                                       "refused this client's certificate (",
                                       ClientFlag(config, "tls-cert"), " ", config.cert_file,
                                       "): is it signed by the CA of the server's --tls-client-ca?"));
  };
  char buf[64];
  const auto first = std::min(deadline, Clock::now() + std::chrono::milliseconds(1000));
  while ((rc = SSL_read(ssl.get(), buf, sizeof(buf))) <= 0 && Retry(ssl.get(), rc, sock.get(), first)) {
  }
  if (rc > 0 || SSL_get_error(ssl.get(), rc) != SSL_ERROR_WANT_READ) return answered(rc);
  static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
  while ((rc = SSL_write(ssl.get(), kPreface, sizeof(kPreface) - 1)) <= 0 &&
         Retry(ssl.get(), rc, sock.get(), deadline)) {
  }
  while ((rc = SSL_read(ssl.get(), buf, sizeof(buf))) <= 0 && Retry(ssl.get(), rc, sock.get(), deadline)) {
  }
  return answered(rc);
}

}  // namespace gdrbench::rpc
