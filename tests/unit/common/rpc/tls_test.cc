#include "common/rpc/tls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace gdrbench::rpc {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// Configs spelled out field by field (designated initializers that skip
// members warn under -Wextra's -Wmissing-field-initializers).
ServerTlsConfig Server(std::string cert, std::string key, bool insecure = false) {
  ServerTlsConfig c;
  c.cert_file = std::move(cert);
  c.key_file = std::move(key);
  c.insecure = insecure;
  return c;
}

ClientTlsConfig Client(std::string cert, bool insecure = false) {
  ClientTlsConfig c;
  c.cert_file = std::move(cert);
  c.insecure = insecure;
  return c;
}

TEST(ServerCredentials, TlsIsTheDefaultAndNeedsCertAndKey) {
  auto c = MakeServerCredentials({});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(c.status()), HasSubstr("--tls-cert and --tls-key"));
}

TEST(ServerCredentials, InsecureExcludesCertificates) {
  auto c = MakeServerCredentials(Server("a.pem", "", true));
  EXPECT_THAT(Msg(c.status()), HasSubstr("--insecure cannot be combined"));
  EXPECT_TRUE(MakeServerCredentials(Server("", "", true)).ok());
}

TEST(ServerCredentials, UnreadableFileNamesTheFlag) {
  auto c = MakeServerCredentials(Server("/nonexistent.pem", "/k"));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(c.status()), HasSubstr("--tls-cert: cannot read /nonexistent.pem"));
}

TEST(ServerCredentials, NonPemFileIsRejected) {
  auto c = MakeServerCredentials(Server("/proc/version", "/proc/version"));
  EXPECT_THAT(Msg(c.status()), HasSubstr("is not a PEM file"));
}

TEST(ChannelCredentials, CertAndKeyGoTogether) {
  auto c = MakeChannelCredentials(Client("c.pem"));
  EXPECT_THAT(Msg(c.status()), HasSubstr("go together"));
}

TEST(Channel, AddressMustBeHostPort) {
  for (const char* bad : {"", "host", ":7070", "host:", "host:0", "host:70000", "host:x"}) {
    auto c = MakeChannel(bad, Client("", true));
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(MakeChannel("10.0.0.1:7070", Client("", true)).ok());
  EXPECT_TRUE(MakeChannel("[::1]:7070", Client("", true)).ok());
}

}  // namespace
}  // namespace gdrbench::rpc
