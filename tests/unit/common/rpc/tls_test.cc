#include "common/rpc/tls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include <string>
#include <utility>

#include "common/rpc/cert_check.h"

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

ClientTlsConfig Client(std::string cert, std::string key) {
  ClientTlsConfig c = Client(std::move(cert));
  c.key_file = std::move(key);
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

// Item 12: a key that is not the certificate's was only found at the
// handshake (or, on the agent, reported as "address in use").
class LocalCertChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tls-local-" + std::to_string(getpid());
    std::string d = dir_;
    std::string cmd = "mkdir -p " + d + " && cd " + d +
                      " && openssl req -x509 -newkey rsa:2048 -nodes -keyout a.key -out a.pem -subj /CN=a -days 2"
                      " && openssl req -x509 -newkey rsa:2048 -nodes -keyout b.key -out b.pem -subj /CN=b -days 2"
                      " && openssl req -new -key a.key -subj /CN=old -out old.csr"
                      " && openssl x509 -req -in old.csr -signkey a.key -days -1 -out old.pem"
                      // Not valid before 2099: OpenSSL 3.0's x509/req cannot set
                      // notBefore; `openssl ca` with a minimal config can.
                      " && printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=index.txt\\nnew_certs_dir=.\\n"
                      "serial=serial\\ndefault_md=sha256\\npolicy=p\\n[p]\\ncommonName=supplied\\n' > ca.cnf"
                      " && : > index.txt && echo 01 > serial"
                      " && openssl req -new -key a.key -subj /CN=future -out future.csr"
                      " && openssl ca -batch -config ca.cnf -cert b.pem -keyfile b.key -in future.csr"
                      "    -out future.pem -notext -startdate 20990101000000Z -enddate 20990201000000Z";
    ASSERT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string P(const char* f) const { return dir_ + "/" + f; }
  std::string dir_;
};

TEST_F(LocalCertChecks, AKeyThatIsNotTheCertificatesIsNamed) {
  auto s = MakeServerCredentials(Server(P("a.pem"), P("b.key")));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(s.status()), HasSubstr("--tls-key is not the key of --tls-cert"));
  auto c = MakeChannelCredentials(Client(P("b.pem"), P("a.key")));
  EXPECT_THAT(Msg(c.status()), HasSubstr("their public keys differ"));
  EXPECT_TRUE(MakeServerCredentials(Server(P("a.pem"), P("a.key"))).ok());
}

TEST_F(LocalCertChecks, AnExpiredClientCertificateIsRefusedAServerOneWarns) {
  auto c = MakeChannelCredentials(Client(P("old.pem"), P("a.key")));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(c.status()), HasSubstr("expired on"));
  EXPECT_TRUE(MakeServerCredentials(Server(P("old.pem"), P("a.key"))).ok());
}

TEST_F(LocalCertChecks, ANotYetValidCertificateIsRefusedForAClientAndAReload) {
  auto c = MakeChannelCredentials(Client(P("future.pem"), P("a.key")));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(c.status()), HasSubstr("is not valid before Jan  1 00:00:00 2099 GMT (check this host's clock)"));
  std::string cert = ReadPem("--tls-cert", P("future.pem")).value();
  std::string key = ReadPem("--tls-key", P("a.key")).value();
  EXPECT_TRUE(CheckCertAndKey("--tls-cert", P("future.pem"), cert, "--tls-key", key, CertUse::kServer).ok());
  absl::Status reload = CheckCertAndKey("--tls-cert", P("future.pem"), cert, "--tls-key", key, CertUse::kReload);
  EXPECT_THAT(Msg(reload), HasSubstr("is not valid before Jan  1 00:00:00 2099 GMT"));
  EXPECT_THAT(Msg(reload), HasSubstr("clients would refuse it"));
  EXPECT_EQ(DescribeCert(cert), "CN=future (issued by CN=b, valid until Feb  1 00:00:00 2099 GMT)");
}

}  // namespace
}  // namespace gdrbench::rpc
