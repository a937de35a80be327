#include "common/rpc/tls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gdrbench::rpc {
namespace {

using ::testing::HasSubstr;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

TEST(ServerCredentials, TlsIsTheDefaultAndNeedsCertAndKey) {
  auto c = MakeServerCredentials({});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(c.status()), HasSubstr("--tls-cert and --tls-key"));
}

TEST(ServerCredentials, InsecureExcludesCertificates) {
  auto c = MakeServerCredentials({.cert_file = "a.pem", .insecure = true});
  EXPECT_THAT(Msg(c.status()), HasSubstr("--insecure cannot be combined"));
  EXPECT_TRUE(MakeServerCredentials({.insecure = true}).ok());
}

TEST(ServerCredentials, UnreadableFileNamesTheFlag) {
  auto c = MakeServerCredentials({.cert_file = "/nonexistent.pem", .key_file = "/k"});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(c.status()), HasSubstr("--tls-cert: cannot read /nonexistent.pem"));
}

TEST(ServerCredentials, NonPemFileIsRejected) {
  auto c = MakeServerCredentials({.cert_file = "/proc/version", .key_file = "/proc/version"});
  EXPECT_THAT(Msg(c.status()), HasSubstr("is not a PEM file"));
}

TEST(ChannelCredentials, CertAndKeyGoTogether) {
  auto c = MakeChannelCredentials({.cert_file = "c.pem"});
  EXPECT_THAT(Msg(c.status()), HasSubstr("go together"));
}

TEST(Channel, AddressMustBeHostPort) {
  for (const char* bad : {"", "host", ":7070", "host:", "host:0", "host:70000", "host:x"}) {
    auto c = MakeChannel(bad, {.insecure = true});
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(MakeChannel("10.0.0.1:7070", {.insecure = true}).ok());
  EXPECT_TRUE(MakeChannel("[::1]:7070", {.insecure = true}).ok());
}

}  // namespace
}  // namespace gdrbench::rpc
