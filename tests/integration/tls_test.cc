// TLS is the default, mTLS with a client CA; a plaintext client and a client
// without the right certificate are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/process_util.h"

namespace gdrbench::testing {
namespace {

using ::testing::HasSubstr;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    pki_ = new TestPki(MakeTestPki(dir_->path()));
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete dir_;
  }
  static std::vector<std::string> NodeInfo(const std::string& address,
                                           std::vector<std::string> extra) {
    std::vector<std::string> argv = {BinDir() + "/gdrbench", "node-info", "--agent", address,
                                     "--timeout-ms", "3000"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  static TempDir* dir_;
  static TestPki* pki_;
};
TempDir* TlsTest::dir_ = nullptr;
TestPki* TlsTest::pki_ = nullptr;

TEST_F(TlsTest, ServerTlsAcceptsAClientThatTrustsTheCa) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Node "));
}

TEST_F(TlsTest, PlaintextClientIsRefusedByATlsAgent) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--insecure"}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(agent.address()));
  EXPECT_EQ(r.out, "");
}

TEST_F(TlsTest, ClientThatDoesNotTrustTheServerIsRefused) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->rogue_ca}));
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(TlsTest, MutualTlsAcceptsTheRightClientCertificate) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key,
                      "--tls-client-ca", pki_->ca});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca, "--tls-cert",
                                                          pki_->client_cert, "--tls-key",
                                                          pki_->client_key}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(agent.log(), HasSubstr("mTLS"));
}

TEST_F(TlsTest, MutualTlsRefusesAClientWithoutACertificate) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key,
                      "--tls-client-ca", pki_->ca});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(TlsTest, MutualTlsRefusesACertificateFromAnotherCa) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key,
                      "--tls-client-ca", pki_->ca});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca, "--tls-cert",
                                                          pki_->rogue_cert, "--tls-key",
                                                          pki_->rogue_key}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(TlsTest, UnreadableCertificateIsOneClearLine) {
  AgentProcess agent({"--tls-cert", "/nonexistent/server.pem", "--tls-key", pki_->server_key});
  EXPECT_FALSE(agent.Start());
  EXPECT_THAT(agent.log(), HasSubstr("--tls-cert: cannot read /nonexistent/server.pem"));
}

TEST_F(TlsTest, InsecureCannotBeCombinedWithCertificates) {
  AgentProcess agent({"--insecure", "--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key});
  EXPECT_FALSE(agent.Start());
  EXPECT_THAT(agent.log(), HasSubstr("--insecure cannot be combined"));
}

}  // namespace
}  // namespace gdrbench::testing
