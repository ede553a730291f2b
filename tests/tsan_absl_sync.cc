// Makes Debian's (uninstrumented) Abseil synchronization visible to ThreadSanitizer, for
// scripts/test-tsan.sh, which preloads this library (LD_PRELOAD) into the TSan test binaries.
//
// libabsl_synchronization is not built with -fsanitize=thread, so TSan sees neither its locks nor
// its wake-ups and reports every access guarded by an absl::Mutex as a race. This library
// interposes the exported entry points (Mutex, CondVar, Notification), calls the real ones
// (dlsym RTLD_NEXT) and tells TSan the happens-before edges they create: a release of the mutex
// before anything that may give it up (Unlock, Await, Wait) and an acquire after anything that
// (re)takes it. Only ordering is annotated, not mutex ownership: TSan's lock-order checks do not
// see these mutexes. Test builds only; never linked into a product.

#include <dlfcn.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

// From the TSan runtime of the test binary (weak: in a process without it, such as ctest itself,
// the wrappers only call the real functions).
extern "C" void __tsan_acquire(void* addr) __attribute__((weak));
extern "C" void __tsan_release(void* addr) __attribute__((weak));

namespace {

// The real function behind an interposed symbol (names mangled for Debian's inline namespace
// absl::debian3), looked up once.
template <typename Fn>
Fn Real(Fn*, const char* symbol) {
  static_assert(sizeof(Fn) == sizeof(void*));
  void* real = dlsym(RTLD_NEXT, symbol);
  if (real == nullptr) __builtin_trap();
  return reinterpret_cast<Fn>(real);
}

void* Addr(const void* p) { return const_cast<void*>(p); }

void Acquire(void* p) {
  if (__tsan_acquire != nullptr) __tsan_acquire(p);
}
void Release(void* p) {
  if (__tsan_release != nullptr) __tsan_release(p);
}

// The mutex this thread is inside the library for (Await, LockWhen, Unlock): the library
// evaluates conditions, the thread's own after retaking the mutex internally and those of other
// waiters while it unlocks, and may give the mutex up right after; Condition::Eval below
// annotates each evaluation as an acquire and a release of that mutex.
thread_local void* waiting_on = nullptr;

// Marks this thread as waiting on `mu` for its lifetime.
class Waiting {
 public:
  explicit Waiting(void* mu) : previous_(waiting_on) { waiting_on = mu; }
  ~Waiting() { waiting_on = previous_; }

 private:
  void* const previous_;
};

}  // namespace

// REAL(Class, Return, mangled, Params...): `real`, the library's function as a plain function
// taking `this` first.
#define REAL(Class, Return, mangled, ...)           \
  using RealFn = Return (*)(Class*, ##__VA_ARGS__); \
  static const RealFn real = Real(static_cast<RealFn*>(nullptr), mangled)

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex4LockEv");
  real(this);
  Acquire(this);
}
void Mutex::ReaderLock() {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex10ReaderLockEv");
  real(this);
  Acquire(this);
}
bool Mutex::TryLock() {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) Acquire(this);
  return locked;
}
bool Mutex::ReaderTryLock() {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) Acquire(this);
  return locked;
}
void Mutex::Unlock() {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex6UnlockEv");
  Release(this);
  Waiting unlocking(this);
  real(this);
}
void Mutex::ReaderUnlock() {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  Release(this);
  Waiting unlocking(this);
  real(this);
}
void Mutex::LockWhen(const Condition& cond) {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE", const Condition&);
  {
    Waiting waiting(this);
    real(this, cond);
  }
  Acquire(this);
}
void Mutex::ReaderLockWhen(const Condition& cond) {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE", const Condition&);
  {
    Waiting waiting(this);
    real(this, cond);
  }
  Acquire(this);
}
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE",
       const Condition&, Duration);
  const bool met = [&] {
    Waiting waiting(this);
    return real(this, cond, timeout);
  }();
  Acquire(this);
  return met;
}
bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE",
       const Condition&, Time);
  const bool met = [&] {
    Waiting waiting(this);
    return real(this, cond, deadline);
  }();
  Acquire(this);
  return met;
}
void Mutex::Await(const Condition& cond) {
  REAL(Mutex, void, "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE", const Condition&);
  Release(this);
  {
    Waiting waiting(this);
    real(this, cond);
  }
  Acquire(this);
}
bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE",
       const Condition&, Duration);
  Release(this);
  const bool met = [&] {
    Waiting waiting(this);
    return real(this, cond, timeout);
  }();
  Acquire(this);
  return met;
}
bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  REAL(Mutex, bool, "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE",
       const Condition&, Time);
  Release(this);
  const bool met = [&] {
    Waiting waiting(this);
    return real(this, cond, deadline);
  }();
  Acquire(this);
  return met;
}

bool Condition::Eval() const {
  REAL(const Condition, bool, "_ZNK4absl7debian39Condition4EvalEv");
  if (waiting_on == nullptr) return real(this);
  // Evaluated under the mutex the library retook; it may give the mutex up again right after.
  Acquire(waiting_on);
  const bool holds = real(this);
  Release(waiting_on);
  return holds;
}

void CondVar::Wait(Mutex* mu) {
  REAL(CondVar, void, "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE", Mutex*);
  Release(mu);
  real(this, mu);
  Acquire(mu);
}
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  REAL(CondVar, bool, "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE",
       Mutex*, Duration);
  Release(mu);
  const bool timed_out = real(this, mu, timeout);
  Acquire(mu);
  return timed_out;
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  REAL(CondVar, bool, "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE", Mutex*,
       Time);
  Release(mu);
  const bool timed_out = real(this, mu, deadline);
  Acquire(mu);
  return timed_out;
}

void Notification::Notify() {
  REAL(Notification, void, "_ZN4absl7debian312Notification6NotifyEv");
  // Every byte: the inline HasBeenNotified() acquire-loads the private flag, wherever it lies.
  for (size_t i = 0; i < sizeof(Notification); ++i) Release(reinterpret_cast<char*>(this) + i);
  real(this);
}
void Notification::WaitForNotification() const {
  REAL(const Notification, void, "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  Acquire(Addr(this));
}
bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  REAL(const Notification, bool,
       "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE", Duration);
  const bool notified = real(this, timeout);
  Acquire(Addr(this));
  return notified;
}
bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  REAL(const Notification, bool,
       "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE", Time);
  const bool notified = real(this, deadline);
  Acquire(Addr(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
