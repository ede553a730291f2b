#ifndef STOKER_COMMON_CLOCK_H_
#define STOKER_COMMON_CLOCK_H_

// Injected time. Logic classes take a Clock* so that heartbeat timeouts and lease expiry are
// tested with FakeClock instead of sleeps.

#include <atomic>
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
  // absl::Mutex::AwaitWithTimeout in this clock's time: waits on `mu` until `cond` holds or
  // `timeout` of this clock's time has passed, and returns whether `cond` holds.
  // REQUIRES: `mu` is held; `cond` does not call this clock.
  virtual bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& cond,
                                absl::Duration timeout) = 0;

  int64_t NowUnixMillis() { return absl::ToUnixMillis(Now()); }

  // The process-wide wall clock.
  static Clock* Real();
};

// Thread-safe. Time moves only when the test calls Advance(); SleepFor and AwaitWithTimeout
// wait until it has (AwaitWithTimeout also ends as soon as its condition holds). An
// AwaitWithTimeout waiter sleeps on the caller's mutex, which Advance cannot signal, so it
// re-reads the fake time every kRecheck of real time: results depend only on the fake time.
class FakeClock : public Clock {
 public:
  static constexpr absl::Duration kRecheck = absl::Milliseconds(1);

  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start), now_nanos_(absl::ToUnixNanos(start)) {}

  absl::Time Now() override;
  void SleepFor(absl::Duration d) override;
  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& cond,
                        absl::Duration timeout) override;
  void Advance(absl::Duration d);
  // Blocks until at least `n` threads are inside SleepFor or AwaitWithTimeout: lets a test
  // advance time only once the thread it wants to wake is waiting.
  void AwaitSleepers(int n);

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  // now_ for conditions evaluated under another mutex (they must not take mu_).
  std::atomic<int64_t> now_nanos_;
  int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
};

// CPU time the calling thread has used: for "busy" figures that should not count time spent
// waiting for a core on a contended host.
absl::Duration ThreadCpuTime();

}  // namespace stoker

#endif  // STOKER_COMMON_CLOCK_H_
