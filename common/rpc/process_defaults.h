// What every gRPC binary of gdrbench (agent, controller, server, the test
// fleet) sets at the start of main, before its first thread.
#pragma once

namespace gdrbench::rpc {

// Turns off abseil's Mutex deadlock detection (absl::OnDeadlockCycle::kIgnore).
// Debian builds abseil without NDEBUG, so every absl::Mutex, gRPC's own locks
// included (grpc_core::Mutex), records its lock order in a global graph by
// default: 11 % of the controller's CPU in a 1,024-agent sweep
// (bench/results/2026-12-05-fleet-scale.txt, perf). It is a debugging aid;
// the unit tests keep abseil's default and with it the check.
void DisableMutexDeadlockDetection();

}  // namespace gdrbench::rpc
