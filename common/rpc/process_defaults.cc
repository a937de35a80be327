#include "common/rpc/process_defaults.h"

#include "absl/synchronization/mutex.h"

namespace gdrbench::rpc {

void DisableMutexDeadlockDetection() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace gdrbench::rpc
