// A small finished run (4 nodes, one low link, one failed pair, a preflight
// warning) with matrices and blame, for the report tests.
#pragma once

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::report {

v1::Run SampleRun();

}  // namespace gdrbench::controller::report
