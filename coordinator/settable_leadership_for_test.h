#ifndef STOKER_COORDINATOR_SETTABLE_LEADERSHIP_FOR_TEST_H_
#define STOKER_COORDINATOR_SETTABLE_LEADERSHIP_FOR_TEST_H_

// A Leadership a test sets by hand (the etcd election is tested with real etcd elsewhere).

#include "absl/synchronization/mutex.h"
#include "coordinator/leadership.h"

namespace stoker {

// Thread-safe. Leads under epoch 0 until Set.
class SettableLeadership : public Leadership {
 public:
  void Set(LeaderView view) {
    absl::MutexLock lock(&mu_);
    view_ = std::move(view);
  }
  LeaderView view() const override {
    absl::MutexLock lock(&mu_);
    return view_;
  }

 private:
  mutable absl::Mutex mu_;
  LeaderView view_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_SETTABLE_LEADERSHIP_FOR_TEST_H_
