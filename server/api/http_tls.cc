#include "server/api/http_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "common/rpc/cert_check.h"
#include "common/status.h"

namespace gdrbench::server::api {

struct HttpTlsIdentity::Material {
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // the intermediates after the leaf, if any
  EVP_PKEY* key = nullptr;
  std::string description;
  ~Material() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

namespace {

constexpr const char* kCertFlag = "--http-tls-cert";
constexpr const char* kKeyFlag = "--http-tls-key";

// The OpenSSL error queue's first entry, cleared.
absl::Status OpenSslError(const std::string& call) {
  const unsigned long e = ERR_get_error();
  char reason[256] = "no OpenSSL error recorded";
  if (e != 0) ERR_error_string_n(e, reason, sizeof(reason));
  ERR_clear_error();
  return absl::InternalError(absl::StrCat(call, " failed: ", reason));
}

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

// Both files read and checked (rpc::CheckCertAndKey: the pair, the validity
// window), then parsed into OpenSSL's objects.
absl::StatusOr<std::shared_ptr<const HttpTlsIdentity::Material>> ReadMaterial(const std::string& cert_file,
                                                                              const std::string& key_file,
                                                                              rpc::CertUse use) {
  GDR_ASSIGN_OR_RETURN(std::string cert, rpc::ReadPem(kCertFlag, cert_file));
  GDR_ASSIGN_OR_RETURN(std::string key, rpc::ReadPem(kKeyFlag, key_file));
  GDR_RETURN_IF_ERROR(rpc::CheckCertAndKey(kCertFlag, cert_file, cert, kKeyFlag, key, use));
  auto m = std::make_shared<HttpTlsIdentity::Material>();
  BioPtr cert_bio = MemBio(cert);
  m->leaf = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  m->chain = sk_X509_new_null();
  while (X509* next = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) sk_X509_push(m->chain, next);
  BioPtr key_bio = MemBio(key);
  m->key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  ERR_clear_error();  // the end of the chain reads as an error
  if (m->leaf == nullptr || m->key == nullptr || m->chain == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(kCertFlag, " ", cert_file, " / ", kKeyFlag, " ", key_file, ": OpenSSL cannot parse them"));
  }
  m->description = rpc::DescribeCert(cert);
  return m;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpTlsIdentity>> HttpTlsIdentity::Load(const std::string& cert_file,
                                                                     const std::string& key_file) {
  std::unique_ptr<HttpTlsIdentity> t(new HttpTlsIdentity());
  t->cert_file_ = cert_file;
  t->key_file_ = key_file;
  GDR_ASSIGN_OR_RETURN(t->current_, ReadMaterial(cert_file, key_file, rpc::CertUse::kServer));
  return t;
}

HttpTlsIdentity::~HttpTlsIdentity() = default;

std::shared_ptr<const HttpTlsIdentity::Material> HttpTlsIdentity::Current() {
  std::lock_guard lock(mu_);
  return current_;
}

absl::Status HttpTlsIdentity::Install(SSL_CTX* ctx) {
  std::shared_ptr<const Material> m = Current();
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    return OpenSslError("SSL_CTX_set_min_proto_version(TLS1_2_VERSION)");
  }
  // The certificate and key the context starts with; the callback below
  // replaces them per handshake with whatever Reload last installed.
  if (SSL_CTX_use_cert_and_key(ctx, m->leaf, m->key, m->chain, /*override=*/1) != 1) {
    return OpenSslError(absl::StrCat("SSL_CTX_use_cert_and_key(", cert_file_, ", ", key_file_, ")"));
  }
  SSL_CTX_set_cert_cb(
      ctx,
      [](SSL* ssl, void* arg) -> int {
        std::shared_ptr<const Material> m = static_cast<HttpTlsIdentity*>(arg)->Current();
        // Up-references the certificate, key and chain: the SSL keeps them
        // whatever Reload does next.
        return SSL_use_cert_and_key(ssl, m->leaf, m->key, m->chain, /*override=*/1) == 1 ? 1 : 0;
      },
      this);
  return absl::OkStatus();
}

absl::StatusOr<std::string> HttpTlsIdentity::Reload() {
  GDR_ASSIGN_OR_RETURN(std::shared_ptr<const Material> fresh,
                       ReadMaterial(cert_file_, key_file_, rpc::CertUse::kReload));
  std::string description = fresh->description;
  {
    std::lock_guard lock(mu_);
    current_ = std::move(fresh);
  }
  return absl::StrCat("TLS reloaded: serving ", description, " to new connections");
}

}  // namespace gdrbench::server::api
