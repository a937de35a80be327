// Conversions between agent/preflight's structs and the v1 PreflightReport.
// Pure functions; thread-safe.
#pragma once

#include "agent/preflight/expectations.h"
#include "agent/preflight/results.h"
#include "gdrbench/v1/preflight.pb.h"

namespace gdrbench::agent::service {

v1::CheckStatus ToProto(preflight::Status status);
v1::PreflightReport ToProto(const preflight::Report& report);
preflight::Expectations FromProto(const v1::PreflightExpectations& expectations);

}  // namespace gdrbench::agent::service
