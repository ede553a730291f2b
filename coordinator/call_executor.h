#ifndef STOKER_COORDINATOR_CALL_EXECUTOR_H_
#define STOKER_COORDINATOR_CALL_EXECUTOR_H_

// A bounded pool of threads on which the coordinator's gRPC handlers run their blocking work
// (the coordinator's mutex, the journal's fdatasync, a job's dataset probe), so that gRPC's
// callback threads never block (docs/architecture.md, Rules the code keeps; issue 16). The handler
// returns at once; the work finishes the call from a pool thread.

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace stoker {

// Thread-safe.
class CallExecutor {
 public:
  // `threads` > 0 workers; at most `max_queued` calls wait for one.
  CallExecutor(std::string name, int threads, size_t max_queued);
  ~CallExecutor();
  CallExecutor(const CallExecutor&) = delete;
  CallExecutor& operator=(const CallExecutor&) = delete;

  // Queues `work`. False (and `work` is not run) when max_queued calls wait already, or after
  // Stop: the caller then answers the call itself (UNAVAILABLE: retry).
  bool Schedule(absl::AnyInvocable<void()> work);
  // Runs what is queued, then joins the threads. Idempotent.
  void Stop();

  const std::string& name() const { return name_; }

 private:
  void Loop();

  const std::string name_;
  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_CALL_EXECUTOR_H_
