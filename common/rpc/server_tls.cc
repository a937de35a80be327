#include "common/rpc/server_tls.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/rpc/cert_check.h"
#include "common/status.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace gdrbench::rpc {
namespace {

struct Material {
  std::string identity;  // certificate chain, then the key
  std::string ca;
  std::string description;
};

absl::StatusOr<Material> ReadMaterial(const ServerTlsConfig& c, CertUse use) {
  Material m;
  GDR_ASSIGN_OR_RETURN(std::string cert, ReadPem("--tls-cert", c.cert_file));
  GDR_ASSIGN_OR_RETURN(std::string key, ReadPem("--tls-key", c.key_file));
  GDR_RETURN_IF_ERROR(CheckCertAndKey("--tls-cert", c.cert_file, cert, "--tls-key", key, use));
  if (!c.client_ca_file.empty()) {
    GDR_ASSIGN_OR_RETURN(m.ca, ReadPem("--tls-client-ca", c.client_ca_file));
  }
  m.description = DescribeCert(cert);
  // One file for both, so that one dup3() swaps them together: OpenSSL's
  // PEM readers (gRPC's for the chain and for the key) skip the blocks that
  // are not theirs.
  m.identity = absl::StrCat(cert, cert.empty() || cert.back() == '\n' ? "" : "\n", key);
  return m;
}

// A memfd holding `content`; -1 with errno on failure.
int MemFile(const char* name, const std::string& content) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

// `content` becomes what `*fd` reads, atomically (dup3 onto the same number).
absl::Status Replace(int* fd, const char* name, const std::string& content) {
  int fresh = MemFile(name, content);
  if (fresh < 0) return ErrnoToStatus(errno, "memfd_create for the TLS material");
  if (*fd < 0) {
    *fd = fresh;
    return absl::OkStatus();
  }
  const int rc = dup3(fresh, *fd, O_CLOEXEC);
  const int err = errno;
  close(fresh);
  return rc < 0 ? ErrnoToStatus(err, "dup3 of the TLS material") : absl::OkStatus();
}

std::string FdPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

}  // namespace

absl::StatusOr<std::unique_ptr<ReloadableServerTls>> ReloadableServerTls::Create(const ServerTlsConfig& config) {
  std::unique_ptr<ReloadableServerTls> t(new ReloadableServerTls());
  t->config_ = config;
  if (config.insecure || config.cert_file.empty() || config.key_file.empty()) {
    // Plaintext, or a config MakeServerCredentials refuses with its sentence.
    GDR_ASSIGN_OR_RETURN(t->credentials_, MakeServerCredentials(config));
    return t;
  }
  GDR_ASSIGN_OR_RETURN(Material m, ReadMaterial(config, CertUse::kServer));
  GDR_RETURN_IF_ERROR(Replace(&t->identity_fd_, "gdrbench-tls-identity", m.identity));
  if (!m.ca.empty()) GDR_RETURN_IF_ERROR(Replace(&t->ca_fd_, "gdrbench-tls-client-ca", m.ca));
  const std::string identity = FdPath(t->identity_fd_);
  t->provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      identity, identity, t->ca_fd_ >= 0 ? FdPath(t->ca_fd_) : std::string(), /*refresh_interval_sec=*/1);
  grpc::experimental::TlsServerCredentialsOptions options(t->provider_);
  options.watch_identity_key_cert_pairs();
  if (t->ca_fd_ >= 0) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  t->credentials_ = grpc::experimental::TlsServerCredentials(options);
  if (!t->credentials_) return absl::InternalError("gRPC made no TLS server credentials");
  return t;
}

ReloadableServerTls::~ReloadableServerTls() {
  provider_.reset();  // its refresh thread stops before the files go
  if (identity_fd_ >= 0) close(identity_fd_);
  if (ca_fd_ >= 0) close(ca_fd_);
}

absl::StatusOr<std::string> ReloadableServerTls::Reload() {
  std::lock_guard lock(mu_);
  if (identity_fd_ < 0) return absl::FailedPreconditionError("serving plaintext (--insecure): no TLS material to reload");
  GDR_ASSIGN_OR_RETURN(Material m, ReadMaterial(config_, CertUse::kReload));
  if (ca_fd_ >= 0) GDR_RETURN_IF_ERROR(Replace(&ca_fd_, "gdrbench-tls-client-ca", m.ca));
  GDR_RETURN_IF_ERROR(Replace(&identity_fd_, "gdrbench-tls-identity", m.identity));
  return absl::StrCat("TLS reloaded: serving ", m.description, " to new connections");
}

}  // namespace gdrbench::rpc
