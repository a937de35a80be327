#include "controller/cli/flag_names.h"

#include <cstdio>

namespace gdrbench::controller::cli {
namespace {

constexpr char kServerWhy[] = "gdrbench-server's flags are --server-* in every command; --tls-* and --insecure are the agents'";

}  // namespace

void PrintDeprecated(const std::string& old_name, const std::string& now, const std::string& why) {
  std::fprintf(stderr, "gdrbench: warning: %s is now %s (%s); %s goes in the next version\n", old_name.c_str(),
               now.c_str(), why.c_str(), old_name.c_str());
}

void AddOldFlag(CLI::App* cmd, const std::string& old_name, const std::string& now, bool& value,
                const std::string& why) {
  cmd->add_flag_callback(
         old_name,
         [&value, old_name, now, why] {
           PrintDeprecated(old_name, now, why);
           value = true;
         },
         "")
      ->group("");
}

void AddServerConnectionFlags(CLI::App* cmd, ServerClientConfig& s, const std::string& when, bool old_names) {
  cmd->add_option("--server-token-file", s.token_file, when + "file holding a bearer token of the server")
      ->envname("GDRBENCH_TOKEN_FILE");
  cmd->add_option("--server-tls-ca", s.tls.ca_file, when + "PEM CA that signed the server's certificate");
  cmd->add_option("--server-tls-cert", s.tls.cert_file, when + "PEM client certificate for the server (mTLS)");
  cmd->add_option("--server-tls-key", s.tls.key_file, when + "PEM client key for the server (mTLS)");
  cmd->add_option("--server-tls-server-name", s.tls.server_name,
                  when + "name to check in the server's certificate instead of the host");
  cmd->add_flag("--server-insecure", s.tls.insecure, when + "plaintext, to a server started with --insecure");
  if (!old_names) return;
  AddOldName(cmd, "--token-file", "--server-token-file", s.token_file, kServerWhy);
  AddOldName(cmd, "--tls-ca", "--server-tls-ca", s.tls.ca_file, kServerWhy);
  AddOldName(cmd, "--tls-cert", "--server-tls-cert", s.tls.cert_file, kServerWhy);
  AddOldName(cmd, "--tls-key", "--server-tls-key", s.tls.key_file, kServerWhy);
  AddOldName(cmd, "--tls-server-name", "--server-tls-server-name", s.tls.server_name, kServerWhy);
  AddOldFlag(cmd, "--insecure", "--server-insecure", s.tls.insecure, kServerWhy);
}

}  // namespace gdrbench::controller::cli
