// A preflight report as JSON without protobuf, for gdrbench-preflight (a
// hardware binary: the gpu preset builds it on machines without gRPC or
// protobuf). The same document as `gdrbench-agent preflight --json` prints
// (protobuf's JSON mapping of v1.PreflightReport with the proto field names:
// 64-bit integers as strings, enums by name, fields at their default value
// left out); tests/unit/agent/preflight/report_json_test.cc holds the two
// equal on real trees.
// Pure; thread-safe.
#pragma once

#include <string>

#include "agent/preflight/results.h"

namespace gdrbench::agent::preflight {

std::string ReportJson(const Report& report);

}  // namespace gdrbench::agent::preflight
