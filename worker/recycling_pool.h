#ifndef STOKER_WORKER_RECYCLING_POOL_H_
#define STOKER_WORKER_RECYCLING_POOL_H_

// A free list of objects whose buffers keep their capacity (batch messages, encoded payloads), so
// the next batch reuses pages already faulted in. Objects travel as unique_ptrs: a gRPC slice that
// still holds one when the worker stops hands it back through a recycler(), which keeps the free
// list alive as long as the pool or any recycler, whichever is last.
//
// Thread-safe.

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stoker {

template <typename T>
class RecyclingPool {
 public:
  using Recycler = std::function<void(std::unique_ptr<T>)>;

  // At most `max_pooled` idle objects are kept; more are deleted when put back.
  explicit RecyclingPool(size_t max_pooled) : free_(std::make_shared<FreeList>(max_pooled)) {}

  // An idle object (its contents the previous user's) or a new one.
  std::unique_ptr<T> Get() {
    absl::MutexLock lock(&free_->mu);
    if (free_->free.empty()) return std::make_unique<T>();
    std::unique_ptr<T> object = std::move(free_->free.back());
    free_->free.pop_back();
    return object;
  }

  void Put(std::unique_ptr<T> object) { free_->Put(std::move(object)); }

  // Put for owners that may outlive the pool.
  Recycler recycler() const {
    return [free = free_](std::unique_ptr<T> object) { free->Put(std::move(object)); };
  }

 private:
  struct FreeList {
    explicit FreeList(size_t max) : max_pooled(max) {}
    void Put(std::unique_ptr<T> object) {
      absl::MutexLock lock(&mu);
      if (free.size() < max_pooled) free.push_back(std::move(object));
    }
    const size_t max_pooled;
    absl::Mutex mu;
    std::vector<std::unique_ptr<T>> free ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<FreeList> free_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_RECYCLING_POOL_H_
