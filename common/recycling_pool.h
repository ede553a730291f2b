#ifndef STOKER_COMMON_RECYCLING_POOL_H_
#define STOKER_COMMON_RECYCLING_POOL_H_

// A free list of objects whose buffers are expensive to fault in (batch messages, payload
// buffers): a recycled object keeps its buffers' capacity (protobuf clears strings without
// freeing them, std::string::clear keeps its capacity), so steady-state batches touch no fresh
// pages. A float32 reference batch is ~38 MB; allocating it per batch means mmap + ~9,000 page
// faults (≈3 µs each on these VMs) + munmap every time. The one pool of the worker and the
// trainer client.
//
// Objects travel either as unique_ptrs, put back explicitly (Put, or a recycler() handed to an
// owner that may outlive the pool, e.g. a gRPC slice the worker's send path gives away), or as
// shared_ptrs that return themselves when their last copy goes (Acquire, the client's received
// batches). Either way the free list lives as long as the pool or any object or recycler of it,
// whichever is last; at most `max_free` idle objects are kept, more are deleted when returned.
//
//   RecyclingPool<std::string> pool(/*max_free=*/8);
//   std::shared_ptr<std::string> buffer = pool.Acquire();  // clear it, then fill it
//   std::unique_ptr<std::string> owned = pool.Get();       // ... pool.Put(std::move(owned))
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

  explicit RecyclingPool(size_t max_free) : free_(std::make_shared<FreeList>(max_free)) {}

  RecyclingPool(const RecyclingPool&) = delete;
  RecyclingPool& operator=(const RecyclingPool&) = delete;

  // An idle object when there is one, else a new (default-constructed) one. A recycled object's
  // contents are unspecified (the previous user's): clear it before use.
  std::unique_ptr<T> Get() { return free_->Take(); }

  // Back to the free list (deleted when it is full).
  void Put(std::unique_ptr<T> object) { free_->Put(std::move(object)); }

  // Put for owners that may outlive the pool.
  Recycler recycler() const {
    return [free = free_](std::unique_ptr<T> object) { free->Put(std::move(object)); };
  }

  // Get as a shared_ptr that puts the object back when its last copy goes.
  std::shared_ptr<T> Acquire() {
    return std::shared_ptr<T>(free_->Take().release(), [free = free_](T* released) {
      free->Put(std::unique_ptr<T>(released));
    });
  }

  // Changes the bound, deleting idle objects beyond it.
  void set_max_free(size_t max_free) { free_->SetMax(max_free); }

  size_t free_count() const { return free_->Count(); }

 private:
  class FreeList {
   public:
    explicit FreeList(size_t max_free) : max_free_(max_free) {}

    std::unique_ptr<T> Take() {
      {
        absl::MutexLock lock(&mu_);
        if (!free_.empty()) {
          std::unique_ptr<T> object = std::move(free_.back());
          free_.pop_back();
          return object;
        }
      }
      return std::make_unique<T>();
    }

    void Put(std::unique_ptr<T> object) {
      absl::MutexLock lock(&mu_);
      if (free_.size() < max_free_) free_.push_back(std::move(object));
      // Otherwise `object` deletes it as the lock is released.
    }

    void SetMax(size_t max_free) {
      std::vector<std::unique_ptr<T>> dropped;  // deleted after the lock is released
      absl::MutexLock lock(&mu_);
      max_free_ = max_free;
      while (free_.size() > max_free_) {
        dropped.push_back(std::move(free_.back()));
        free_.pop_back();
      }
    }

    size_t Count() const {
      absl::MutexLock lock(&mu_);
      return free_.size();
    }

   private:
    mutable absl::Mutex mu_;
    size_t max_free_ ABSL_GUARDED_BY(mu_);
    std::vector<std::unique_ptr<T>> free_ ABSL_GUARDED_BY(mu_);
  };

  const std::shared_ptr<FreeList> free_;
};

}  // namespace stoker

#endif  // STOKER_COMMON_RECYCLING_POOL_H_
