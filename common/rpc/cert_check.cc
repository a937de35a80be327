#include "common/rpc/cert_check.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/rpc/x509_text.h"
#include "spdlog/spdlog.h"

namespace gdrbench::rpc {

absl::Status CheckCertAndKey(const std::string& cert_flag, const std::string& cert_path,
                             const std::string& cert_pem, const std::string& key_flag,
                             const std::string& key_pem, CertUse use) {
  std::unique_ptr<BIO, decltype(&BIO_free)> cb(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert) return absl::InvalidArgumentError(absl::StrCat(cert_flag, ": ", cert_path, " holds no PEM certificate"));
  std::unique_ptr<BIO, decltype(&BIO_free)> kb(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr),
                                                          EVP_PKEY_free);
  if (!key) return absl::InvalidArgumentError(absl::StrCat(key_flag, " holds no PEM private key (or it is encrypted)"));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(key_flag, " is not the key of ", cert_flag, " ", cert_path,
                                                   " (their public keys differ)"));
  }
  std::string why;
  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0) {
    why = absl::StrCat("expired on ", TimeText(X509_get0_notAfter(cert.get())));
  } else if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) > 0) {
    why = absl::StrCat("is not valid before ", TimeText(X509_get0_notBefore(cert.get())), " (check this host's clock)");
  }
  if (why.empty()) return absl::OkStatus();
  if (use == CertUse::kClient) {
    return absl::InvalidArgumentError(absl::StrCat(cert_flag, " ", cert_path, " ", why, ": the server will refuse it"));
  }
  if (use == CertUse::kReload) {
    return absl::InvalidArgumentError(absl::StrCat(cert_flag, " ", cert_path, " ", why, ": clients would refuse it"));
  }
  spdlog::warn("{} {} {}: clients will refuse this server until it is renewed", cert_flag, cert_path, why);
  return absl::OkStatus();
}

std::string DescribeCert(const std::string& cert_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> b(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert) return "no certificate";
  return absl::StrCat(NameText(X509_get_subject_name(cert.get())), " (issued by ",
                      NameText(X509_get_issuer_name(cert.get())), ", valid until ",
                      TimeText(X509_get0_notAfter(cert.get())), ")");
}

}  // namespace gdrbench::rpc
