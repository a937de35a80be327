// OpenSSL's certificate fields as text for messages (dates as OpenSSL prints
// them, "Jan  2 00:00:00 2020 GMT"; names as RFC 2253, "CN=agent,O=lab").
#pragma once

#include <openssl/x509.h>

#include <string>

namespace gdrbench::rpc {

std::string TimeText(const ASN1_TIME* t);
std::string NameText(const X509_NAME* name);

}  // namespace gdrbench::rpc
