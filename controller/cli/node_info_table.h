// Human-readable rendering of NodeInfo.
#pragma once

#include <string>

#include "gdrbench/v1/node.pb.h"

namespace gdrbench::controller::cli {

std::string FormatNodeInfo(const v1::NodeInfo& info);

}  // namespace gdrbench::controller::cli
