// Logging: spdlog everywhere (Debian 12's abseil has no absl/log). One line
// per state change, never per work request.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gdrbench {

// Sets the default logger: stderr, "<time> <level> <message>". `level` is one
// of trace, debug, info, warn, error; INVALID_ARGUMENT otherwise.
absl::Status InitLogging(const std::string& level);

}  // namespace gdrbench
