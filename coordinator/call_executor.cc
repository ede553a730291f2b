#include "coordinator/call_executor.h"

#include <utility>

namespace stoker {

CallExecutor::CallExecutor(std::string name, int threads, size_t max_queued)
    : name_(std::move(name)), max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

CallExecutor::~CallExecutor() { Stop(); }

bool CallExecutor::Schedule(absl::AnyInvocable<void()> work) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(work));
  return true;
}

void CallExecutor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void CallExecutor::Loop() {
  while (true) {
    absl::AnyInvocable<void()> work;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

}  // namespace stoker
