#ifndef STOKER_COMMON_CLOCK_H_
#define STOKER_COMMON_CLOCK_H_

// Injected time. Logic classes take a Clock* so that heartbeat timeouts and lease expiry are
// tested with FakeClock instead of sleeps.

#include <atomic>
#include <cstdint>
#include <set>
#include <vector>

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
  // absl::Mutex::AwaitWithDeadline on this clock's time: releases `mu` until `cond` holds or
  // the clock reaches `deadline`, then holds it again; returns whether `cond` holds. Code that
  // waits this way follows a FakeClock in tests (no real sleeps). REQUIRES: `mu` is held.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& cond, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return AwaitWithDeadline(mu, cond, Now() + timeout);
  }

  int64_t NowUnixMillis() { return absl::ToUnixMillis(Now()); }

  // The process-wide real clock: monotonic (it never jumps, so Now() differences are true
  // durations), anchored at the wall time when first used (so Now() reads as wall time).
  static Clock* Real();
};

// Thread-safe. Time moves only when the test calls Advance(); SleepFor and AwaitWithDeadline
// wait until it has (AwaitWithDeadline also returns as soon as its condition holds). Lock order:
// a waiter's mutex before the clock's; Advance holds neither while it wakes waiters.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}

  absl::Time Now() override;
  void SleepFor(absl::Duration d) override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override;
  void Advance(absl::Duration d);
  // Blocks until at least `n` threads are inside SleepFor or AwaitWithDeadline: lets a test
  // advance time only once the thread it wants to wake is waiting.
  void AwaitSleepers(int n);

 private:
  void AddSleepers(int n);

  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped by Advance: AwaitWithDeadline's waiters re-check the time when it changes.
  std::atomic<uint64_t> generation_{0};
  // The mutexes AwaitWithDeadline waits on, which Advance locks and unlocks to wake them.
  absl::Mutex waiters_mu_;
  std::multiset<absl::Mutex*> waiters_ ABSL_GUARDED_BY(waiters_mu_);
};

// Thread-safe. A FakeClock that also moves `step` forward at every Now(): code that times itself
// reads exact durations (`step` times the reads from one end to the other, the end included).
class SteppingClock : public FakeClock {
 public:
  explicit SteppingClock(absl::Duration step,
                         absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : FakeClock(start), step_(step) {}

  absl::Time Now() override;

 private:
  const absl::Duration step_;
};

// Thread-safe. Time moves only when someone sleeps: SleepFor returns at once, adds its duration
// to Now() and records it, so a test sees exactly which waits the code chose (a retry's backoff,
// a server's Retry-After) without waiting them. AwaitWithDeadline only evaluates its condition.
class SleepRecordingClock : public Clock {
 public:
  explicit SleepRecordingClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : now_(start) {}

  absl::Time Now() override;
  void SleepFor(absl::Duration d) override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override;
  // Every SleepFor's duration, in order.
  std::vector<absl::Duration> sleeps() const;

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
};

// CPU time the calling thread has used: for "busy" figures that should not count time spent
// waiting for a core on a contended host.
absl::Duration ThreadCpuTime();

// CPU time (user + system) every thread of this process has used, exited ones included.
absl::Duration ProcessCpuTime();

}  // namespace stoker

#endif  // STOKER_COMMON_CLOCK_H_
