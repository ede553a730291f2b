#include "common/mutex_tuning.h"

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"

namespace stoker {
namespace {

// Two mutexes taken in both orders form a lock-order cycle: with the detection on (Debian's
// Abseil) the second order aborts the process, after SkipMutexDeadlockDetection it is ignored.
void LockBothOrders() {
  absl::Mutex first;
  absl::Mutex second;
  {
    absl::MutexLock a(&first);
    absl::MutexLock b(&second);
  }
  absl::MutexLock b(&second);
  absl::MutexLock a(&first);
}

TEST(MutexTuningTest, LockOrderCycleNoLongerChecked) {
  SkipMutexDeadlockDetection();
  LockBothOrders();
  SUCCEED();
}

}  // namespace
}  // namespace stoker
