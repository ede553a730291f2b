#include "common/mutex_tuning.h"

#include "absl/synchronization/mutex.h"

namespace stoker {

void SkipMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace stoker
