#include "tests/integration/process_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gdrbench::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed");
  return pid;
}

// Waits up to `timeout` for pid; kills it past that. Returns the exit code or -1.
int WaitBounded(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

// GDRBENCH_TEST_BIN_DIR: run the tests against other binaries (an older
// build, to see a regression test fail before its fix).
std::string BinDir() {
  if (const char* dir = std::getenv("GDRBENCH_TEST_BIN_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::string(GDRBENCH_BINARY_DIR) + "/bin";
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gdrbench-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  TempDir dir;
  std::string out = dir.path() + "/out", err = dir.path() + "/err";
  auto start = std::chrono::steady_clock::now();
  pid_t pid = Spawn(argv, out, err);
  CommandResult r;
  r.exit_code = WaitBounded(pid, timeout);
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

AgentProcess::AgentProcess(std::vector<std::string> args) : args_(std::move(args)) {}

AgentProcess::~AgentProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool AgentProcess::Start(std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {BinDir() + "/gdrbench-agent", "--listen", "127.0.0.1:0",
                                   "--port-file", dir_.path() + "/port"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  pid_ = Spawn(argv, dir_.path() + "/stdout", dir_.path() + "/stderr");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::ifstream in(dir_.path() + "/port");
    if (in >> port_ && port_ > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string AgentProcess::log() const { return Slurp(dir_.path() + "/stderr"); }

int AgentProcess::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int code = WaitBounded(pid_, std::chrono::seconds(10));
  pid_ = -1;
  return code;
}

TestPki MakeTestPki(const std::string& dir) {
  TestPki p;
  p.ca = dir + "/ca.pem";
  p.server_cert = dir + "/server.pem";
  p.server_key = dir + "/server.key";
  p.client_cert = dir + "/client.pem";
  p.client_key = dir + "/client.key";
  p.rogue_ca = dir + "/rogue-ca.pem";
  p.rogue_cert = dir + "/rogue.pem";
  p.rogue_key = dir + "/rogue.key";
  for (auto [cert, key, name] : {std::tuple{&p.expired_cert, &p.expired_key, "expired"},
                                 std::tuple{&p.future_cert, &p.future_key, "future"},
                                 std::tuple{&p.server2_cert, &p.server2_key, "server2"}}) {
    *cert = dir + "/" + name + ".pem";
    *key = dir + "/" + name + ".key";
  }
  std::string script =
      "set -e; cd '" + dir + "';"
      "cat > san.cnf <<'X'\n"
      "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
      "X\n"
      "for ca in ca rogue-ca; do "
      "  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "    -subj \"/CN=gdrbench test $ca\" -keyout $ca.key -out $ca.pem 2>/dev/null; "
      "done;"
      "sign() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj \"/CN=$1\" "
      "  -keyout $1.key -out $1.csr 2>/dev/null; "
      "  openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -days 2 "
      "  $3 -out $1.pem 2>/dev/null; };"
      "sign server ca '-extfile san.cnf'; sign client ca ''; sign rogue rogue-ca '';"
      "sign server2 ca '-extfile san.cnf';"
      // openssl ca with a minimal config: the one 3.0 tool that sets notBefore.
      "printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=index.txt\\nnew_certs_dir=.\\nserial=serial\\n"
      "default_md=sha256\\npolicy=p\\ncopy_extensions=copy\\n[p]\\ncommonName=supplied\\n' > ca.cnf;"
      ": > index.txt; echo 01 > serial;"
      "dated() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj \"/CN=$1\" "
      "  -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout $1.key -out $1.csr 2>/dev/null; "
      "  openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in $1.csr -out $1.pem -notext "
      "  -startdate $2 -enddate $3 2>/dev/null; };"
      "dated expired 20200101000000Z 20200102000000Z; dated future 20990101000000Z 20990201000000Z;";
  CommandResult r = RunCommand({"/bin/bash", "-c", script});
  if (r.exit_code != 0) throw std::runtime_error("openssl failed: " + r.err);
  return p;
}

}  // namespace gdrbench::testing
