#include "common/rpc/x509_text.h"

#include <openssl/bio.h>

#include <memory>

namespace gdrbench::rpc {
namespace {

std::string Drain(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string TimeText(const ASN1_TIME* t) {
  std::unique_ptr<BIO, decltype(&BIO_free)> b(BIO_new(BIO_s_mem()), BIO_free);
  ASN1_TIME_print(b.get(), t);
  return Drain(b.get());
}

std::string NameText(const X509_NAME* name) {
  std::unique_ptr<BIO, decltype(&BIO_free)> b(BIO_new(BIO_s_mem()), BIO_free);
  X509_NAME_print_ex(b.get(), name, 0, XN_FLAG_RFC2253);
  return Drain(b.get());
}

}  // namespace gdrbench::rpc
