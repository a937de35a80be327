#include <cstdio>

#include "controller/cli/cli_util.h"
#include "controller/cli/commands.h"
#include "controller/cli/node_info_table.h"

namespace gdrbench::controller::cli {

int NodeInfoCommand(const NodeInfoOptions& options) {
  auto client = ConnectAgent(options.agent, options.common);
  if (!client.ok()) return PrintError(client.status());
  auto info = (*client)->GetNodeInfo();
  if (!info.ok()) return PrintError(info.status());
  if (options.common.json) {
    PrintJson(*info);
  } else {
    std::fputs(FormatNodeInfo(*info).c_str(), stdout);
  }
  return 0;
}

}  // namespace gdrbench::controller::cli
