#include "common/clock.h"

#include <time.h>

namespace stoker {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }
  bool AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& cond,
                        absl::Duration timeout) override {
    return mu->AwaitWithTimeout(cond, timeout);
  }
};

}  // namespace

absl::Duration ThreadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

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

bool FakeClock::AwaitWithTimeout(absl::Mutex* mu, const absl::Condition& cond,
                                 absl::Duration timeout) {
  struct Wait {
    const absl::Condition* cond;
    const std::atomic<int64_t>* now_nanos;
    int64_t deadline_nanos;
  };
  Wait wait{&cond, &now_nanos_, 0};
  {
    absl::MutexLock lock(&mu_);
    wait.deadline_nanos = absl::ToUnixNanos(now_ + timeout);
    ++sleepers_;
  }
  const absl::Condition done(
      +[](Wait* w) { return w->cond->Eval() || w->now_nanos->load() >= w->deadline_nanos; },
      &wait);
  while (!mu->AwaitWithTimeout(done, kRecheck)) {
  }
  const bool met = cond.Eval();
  absl::MutexLock lock(&mu_);
  --sleepers_;
  return met;
}

void FakeClock::AwaitSleepers(int n) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sleepers_ >= n; };
  mu_.Await(absl::Condition(&enough));
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
  now_nanos_.store(absl::ToUnixNanos(now_));
}

}  // namespace stoker
