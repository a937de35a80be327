// gdrbench preflight --agent HOST:PORT [--json] [--checks a,b]
#include <algorithm>
#include <cstdio>

#include "controller/cli/cli_util.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/commands.h"
#include "controller/cli/preflight_table.h"

namespace gdrbench::controller::cli {

int PreflightCommand(const PreflightOptions& options) {
  auto client = ConnectAgent(options.agent, options.common);
  if (!client.ok()) return PrintError(client.status());
  v1::RunPreflightRequest request;
  for (const auto& c : options.checks) request.add_checks(c);
  *request.mutable_expectations() = options.expect;
  auto report = (*client)->RunPreflight(request);
  if (!report.ok()) return PrintError(report.status());
  if (options.common.json) {
    PrintJson(*report);
  } else {
    std::fputs(FormatPreflight(*report).c_str(), stdout);
  }
  return report->overall() == v1::CHECK_STATUS_FAIL ? kExitFailed : kExitPassed;
}

}  // namespace gdrbench::controller::cli
