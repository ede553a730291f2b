#ifndef STOKER_COMMON_CLOCK_H_
#define STOKER_COMMON_CLOCK_H_

// Injected time. Logic classes take a Clock* so that heartbeat timeouts and lease expiry are
// tested with FakeClock instead of sleeps.

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace stoker {

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // Blocks for `d` of this clock's time.
  virtual void SleepFor(absl::Duration d) = 0;

  int64_t NowUnixMillis() { return absl::ToUnixMillis(Now()); }

  // The process-wide wall clock.
  static Clock* Real();
};

// Thread-safe. Time moves only when the test calls Advance(); SleepFor waits until it has.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}

  absl::Time Now() override;
  void SleepFor(absl::Duration d) override;
  void Advance(absl::Duration d);
  // Blocks until at least `n` threads are inside SleepFor: lets a test advance time only once
  // the thread it wants to wake is waiting.
  void AwaitSleepers(int n);

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
};

// CPU time the calling thread has used: for "busy" figures that should not count time spent
// waiting for a core on a contended host.
absl::Duration ThreadCpuTime();

}  // namespace stoker

#endif  // STOKER_COMMON_CLOCK_H_
