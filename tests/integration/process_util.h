// Test helpers: run a command to completion, or keep an agent process alive
// for the length of a test. Every wait is bounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace gdrbench::testing {

// Time bounds of tests that measure how fast something answers are for the
// release build. Under `make sanitize` (ASan, GCC's __SANITIZE_ADDRESS__)
// every binary of the tree runs several times slower: the bounds scale by
// this, and the tests still check that the answer comes.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kTimeScale = 4;
#else
inline constexpr int kTimeScale = 1;
#endif

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

// Runs argv[0] with argv, stdin from /dev/null; kills it after `timeout`.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A temporary directory removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// gdrbench-agent started with `args` plus --listen 127.0.0.1:0 and a port
// file; Start() waits (bounded) until it serves. Killed on destruction.
class AgentProcess {
 public:
  explicit AgentProcess(std::vector<std::string> args);
  ~AgentProcess();
  // false when the agent exited or did not serve within `timeout`; then
  // log() says why.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(15));
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const;
  // SIGTERM, then waits; returns the exit code.
  int Stop();

 private:
  std::vector<std::string> args_;
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// The build's binaries.
std::string BinDir();

// Makes a CA, a server cert for 127.0.0.1/localhost, a client cert signed by
// the CA and a client cert signed by a second, unrelated CA (openssl). Also
// server certs of the CA (same names) that expired in 2020, that are not
// valid before 2099 (`openssl ca -startdate/-enddate`: OpenSSL 3.0's x509
// and req cannot set notBefore), and a second valid one (CN=server2).
struct TestPki {
  std::string ca, server_cert, server_key, client_cert, client_key;
  std::string rogue_ca, rogue_cert, rogue_key;
  std::string expired_cert, expired_key, future_cert, future_key, server2_cert, server2_key;
};
TestPki MakeTestPki(const std::string& dir);

}  // namespace gdrbench::testing
