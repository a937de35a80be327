#include "controller/cli/sweep_conflicts.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/rpc/tls.h"
#include "common/status.h"

namespace gdrbench::controller::cli {
namespace {

absl::Status Bad(auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); }

// The flags of `names` given on the command line (or a --config file).
std::vector<std::string> Given(const CLI::App& cmd, std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  for (const char* n : names) {
    const CLI::Option* opt = cmd.get_option_no_throw(n);  // a flag this build lacks was not given
    if (opt != nullptr && opt->count() > 0) out.push_back(n);
  }
  return out;
}

}  // namespace

absl::Status CheckSweepFlagConflicts(const SweepOptions& o, const CLI::App& cmd) {
  if (o.common.tls.insecure) {
    if (auto tls = Given(cmd, {"--tls-ca", "--tls-cert", "--tls-key"}); !tls.empty()) {
      return Bad("--insecure (plaintext to the agents) contradicts ", absl::StrJoin(tls, ", "),
                 ": give one or the other");
    }
  }
  if (o.common.json && !o.dry_run) {
    return Bad("--json prints the plan of --dry-run only; a sweep writes run.json in --out (progress as JSON "
               "lines: --progress json)");
  }
  if (o.verbose && !o.dry_run) {
    return Bad("--verbose lists the rounds of --dry-run's plan only; a sweep's progress is --progress lines");
  }
  if (o.dry_run && !o.resume.empty()) {
    return Bad("--dry-run prints a new plan and --resume continues a recorded run: give one of them");
  }
  if (o.mode != "quick") {
    if (auto quick = Given(cmd, {"--quick-rounds", "--quick-seed", "--seed"}); !quick.empty()) {
      return Bad(absl::StrJoin(quick, " and "), " apply to --mode quick only, not --mode ", o.mode);
    }
  }
  if (o.mode != "incast" && !Given(cmd, {"--fan-in"}).empty()) {
    return Bad("--fan-in applies to --mode incast only, not --mode ", o.mode);
  }
  auto server_only = Given(cmd, {"--server-insecure", "--server-tls-ca", "--server-tls-cert", "--server-tls-key",
                                 "--cluster"});
  if (o.server.address.empty() && !server_only.empty()) {
    return Bad(absl::StrJoin(server_only, ", "), " without --server (or GDRBENCH_SERVER): nothing is stored, "
               "so ", server_only.size() == 1 ? "it means" : "they mean", " nothing");
  }
  if (o.server.tls.insecure) {
    if (auto tls = Given(cmd, {"--server-tls-ca", "--server-tls-cert", "--server-tls-key"}); !tls.empty()) {
      return Bad("--server-insecure (plaintext to the server) contradicts ", absl::StrJoin(tls, ", "),
                 ": give one or the other");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTlsFiles(const SweepOptions& o, const sweep::SweepConfig& c) {
  const rpc::ClientTlsConfig agents =
      c.tls ? *c.tls : c.inventory.has_tls ? c.inventory.tls : rpc::ClientTlsConfig{};
  if (auto creds = rpc::MakeChannelCredentials(agents); !creds.ok()) {
    return absl::Status(creds.status().code(), absl::StrCat("agents' TLS: ", creds.status().message()));
  }
  if (o.server.address.empty()) return absl::OkStatus();
  rpc::ClientTlsConfig server = o.server.tls;
  server.ca_from = "--server-tls-ca";
  server.cert_from = "--server-tls-cert";
  server.key_from = "--server-tls-key";
  if (auto creds = rpc::MakeChannelCredentials(server); !creds.ok()) {
    return absl::Status(creds.status().code(), absl::StrCat("server's TLS: ", creds.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::cli
