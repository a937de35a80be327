// One spelling per concept on the command line (issue 32, item 3). The
// agents' TLS is --tls-ca, --tls-cert, --tls-key, --tls-server-name and
// --insecure in every command; gdrbench-server's is the same words after
// "--server-" (--server-tls-ca, ..., --server-insecure, --server-token-file)
// in every command that talks to it. Names a command used before stay for
// one version: hidden from --help, each printing one deprecation line when
// used.
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "controller/server_client/server_client.h"

namespace gdrbench::controller::cli {

// "gdrbench: warning: --old is now --new (why); --old goes in the next
// version" on stderr.
void PrintDeprecated(const std::string& old_name, const std::string& now, const std::string& why);

// `old_name` as a hidden alias of the option `now` stores into `value`,
// printing PrintDeprecated's line when used.
template <typename T>
void AddOldName(CLI::App* cmd, const std::string& old_name, const std::string& now, T& value,
                const std::string& why) {
  cmd->add_option_function<T>(
         old_name,
         [&value, old_name, now, why](const T& v) {
           PrintDeprecated(old_name, now, why);
           value = v;
         },
         "")
      ->group("");
}
void AddOldFlag(CLI::App* cmd, const std::string& old_name, const std::string& now, bool& value,
                const std::string& why);

// --server-token-file (GDRBENCH_TOKEN_FILE), --server-tls-ca,
// --server-tls-cert, --server-tls-key, --server-tls-server-name,
// --server-insecure into `server`; `when` prefixes their help ("with
// --server: "). `old_names`: also --token-file, --tls-ca, --tls-cert,
// --tls-key, --tls-server-name and --insecure, the spellings of the commands
// that talk only to the server until now (runs, baseline, report, drain,
// resume).
void AddServerConnectionFlags(CLI::App* cmd, ServerClientConfig& server, const std::string& when,
                              bool old_names);

}  // namespace gdrbench::controller::cli
