// TLS is the default, mTLS with a client CA; a plaintext client and a client
// without the right certificate are refused, and the client says why (issue
// 12, item 12: foreign CA, expired, not yet valid, refused by the agent).
// SIGHUP reloads the agent's certificate; a bad one leaves the old serving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <functional>
#include <thread>

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
  EXPECT_THAT(r.err, HasSubstr("the server speaks TLS and this client plaintext (--insecure)"));
  EXPECT_EQ(r.out, "");
}

TEST_F(TlsTest, ClientThatDoesNotTrustTheServerIsRefused) {
  AgentProcess agent({"--tls-cert", pki_->server_cert, "--tls-key", pki_->server_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->rogue_ca}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("the server's certificate (CN=server) is issued by CN=gdrbench test ca, a CA "
                               "that --tls-ca " + pki_->rogue_ca + " does not hold (a foreign CA)"));
}

// The agent starts with them (and warns); the client names which it is.
TEST_F(TlsTest, AnExpiredAgentCertificateIsNamedByTheClient) {
  AgentProcess agent({"--tls-cert", pki_->expired_cert, "--tls-key", pki_->expired_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  EXPECT_THAT(agent.log(), HasSubstr("expired on Jan  2 00:00:00 2020 GMT"));
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("the server's certificate (CN=expired) expired on Jan  2 00:00:00 2020 GMT"));
}

TEST_F(TlsTest, ANotYetValidAgentCertificateIsNamedByTheClient) {
  AgentProcess agent({"--tls-cert", pki_->future_cert, "--tls-key", pki_->future_key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  EXPECT_THAT(agent.log(), HasSubstr("is not valid before Jan  1 00:00:00 2099 GMT"));
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("the server's certificate (CN=future) is not valid before Jan  1 00:00:00 "
                               "2099 GMT: check the clocks of both hosts"));
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
  EXPECT_THAT(r.err, HasSubstr("requires a client certificate (mTLS)"));
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
  EXPECT_THAT(r.err, HasSubstr("refused this client's certificate (--tls-cert " + pki_->rogue_cert + ")"));
  EXPECT_EQ(r.out, "");
}

// The subject of the certificate the agent serves a new connection.
std::string ServedSubject(const std::string& address) {
  CommandResult r = RunCommand({"/bin/bash", "-c", "openssl s_client -connect " + address +
                                " -alpn h2 </dev/null 2>/dev/null | openssl x509 -noout -subject"});
  return r.out;
}

bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 100; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(TlsTest, SighupReloadsTheCertificateAndABadOneLeavesTheOldServing) {
  namespace fs = std::filesystem;
  TempDir live;
  const std::string cert = live.path() + "/agent.pem", key = live.path() + "/agent.key";
  fs::copy_file(pki_->server_cert, cert);
  fs::copy_file(pki_->server_key, key);
  AgentProcess agent({"--tls-cert", cert, "--tls-key", key});
  ASSERT_TRUE(agent.Start()) << agent.log();
  EXPECT_THAT(ServedSubject(agent.address()), HasSubstr("CN = server\n"));

  // Renewed: new connections get it, without a restart.
  fs::copy_file(pki_->server2_cert, cert, fs::copy_options::overwrite_existing);
  fs::copy_file(pki_->server2_key, key, fs::copy_options::overwrite_existing);
  kill(agent.pid(), SIGHUP);
  EXPECT_TRUE(Eventually([&] { return ServedSubject(agent.address()).find("CN = server2") != std::string::npos; }))
      << agent.log();
  EXPECT_THAT(agent.log(), HasSubstr("SIGHUP: TLS reloaded: serving CN=server2 (issued by CN=gdrbench test ca"));

  // A key that is not the certificate's: one line, and server2 stays.
  fs::copy_file(pki_->client_key, key, fs::copy_options::overwrite_existing);
  kill(agent.pid(), SIGHUP);
  EXPECT_TRUE(Eventually([&] { return agent.log().find("SIGHUP: kept") != std::string::npos; })) << agent.log();
  EXPECT_THAT(agent.log(), HasSubstr("SIGHUP: kept the TLS certificate in use: --tls-key is not the key of "
                                     "--tls-cert " + cert));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past gRPC's 1 s re-read
  EXPECT_THAT(ServedSubject(agent.address()), HasSubstr("CN = server2"));
  CommandResult r = RunCommand(NodeInfo(agent.address(), {"--tls-ca", pki_->ca}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(agent.Stop(), 0) << agent.log();
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
