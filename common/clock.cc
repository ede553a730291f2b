#include "common/clock.h"

#include <time.h>

#include <chrono>

namespace stoker {
namespace {

// The wall time read once, then moved by std::chrono::steady_clock. A duration taken as the
// difference of two Now() is the time that elapsed even when NTP steps the wall clock (which
// absl::Now() would follow, backwards too), and Now() stays near the wall time for the humans and
// the peers that read it: it parts from the wall clock only by the steps taken since the start.
class RealClock : public Clock {
 public:
  RealClock() : wall_start_(absl::Now()), steady_start_(std::chrono::steady_clock::now()) {}

  absl::Time Now() override {
    return wall_start_ + absl::FromChrono(std::chrono::steady_clock::now() - steady_start_);
  }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    // absl::Mutex waits on the wall clock: hand it the time left on this one.
    return mu->AwaitWithTimeout(cond, deadline - Now());
  }

 private:
  const absl::Time wall_start_;
  const std::chrono::steady_clock::time_point steady_start_;
};

}  // namespace

namespace {

absl::Duration CpuClock(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return absl::DurationFromTimespec(ts);
}

}  // namespace

absl::Duration ThreadCpuTime() { return CpuClock(CLOCK_THREAD_CPUTIME_ID); }

absl::Duration ProcessCpuTime() { return CpuClock(CLOCK_PROCESS_CPUTIME_ID); }

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::SleepFor(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  const absl::Time wake = now_ + d;
  auto reached = [this, wake]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return now_ >= wake; };
  ++sleepers_;
  mu_.Await(absl::Condition(&reached));
  --sleepers_;
}

namespace {

// AwaitWithDeadline's wait: the caller's condition, or the fake time moved.
struct FakeWait {
  const absl::Condition* cond;
  const std::atomic<uint64_t>* generation;
  uint64_t seen;
  static bool Done(FakeWait* wait) {
    return wait->cond->Eval() || wait->generation->load() != wait->seen;
  }
};

}  // namespace

void FakeClock::AddSleepers(int n) {
  absl::MutexLock lock(&mu_);
  sleepers_ += n;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                  absl::Time deadline) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // (Un)registering takes waiters_mu_, which Advance holds while it locks waiters' mutexes:
  // never while holding `mu`.
  mu->Unlock();
  {
    absl::MutexLock lock(&waiters_mu_);
    waiters_.insert(mu);
  }
  AddSleepers(1);
  mu->Lock();
  while (!cond.Eval()) {
    FakeWait wait{&cond, &generation_, generation_.load()};
    if (Now() >= deadline) break;
    mu->Await(absl::Condition(&FakeWait::Done, &wait));
  }
  mu->Unlock();
  AddSleepers(-1);
  {
    absl::MutexLock lock(&waiters_mu_);
    waiters_.erase(waiters_.find(mu));
  }
  mu->Lock();
  return cond.Eval();
}

void FakeClock::AwaitSleepers(int n) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sleepers_ >= n; };
  mu_.Await(absl::Condition(&enough));
}

void FakeClock::Advance(absl::Duration d) {
  {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  ++generation_;
  // Wake AwaitWithDeadline's waiters: releasing their mutex makes absl re-check the condition.
  absl::MutexLock lock(&waiters_mu_);
  for (absl::Mutex* mu : waiters_) {
    mu->Lock();
    mu->Unlock();
  }
}

absl::Time SteppingClock::Now() {
  Advance(step_);
  return FakeClock::Now();
}

absl::Time SleepRecordingClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

void SleepRecordingClock::SleepFor(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
  sleeps_.push_back(d);
}

bool SleepRecordingClock::AwaitWithDeadline(absl::Mutex*, const absl::Condition& cond, absl::Time) {
  return cond.Eval();
}

std::vector<absl::Duration> SleepRecordingClock::sleeps() const {
  absl::MutexLock lock(&mu_);
  return sleeps_;
}

}  // namespace stoker
