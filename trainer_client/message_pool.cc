#include "trainer_client/message_pool.h"

#include <utility>

#include "stoker/v1/worker.pb.h"

namespace stoker {

std::shared_ptr<MessagePool> MessagePool::Create(size_t max_free) {
  return std::shared_ptr<MessagePool>(new MessagePool(max_free));
}

MessagePool::MessagePool(size_t max_free) : max_free_(max_free) {}

MessagePool::~MessagePool() = default;

std::shared_ptr<v1::BatchMessage> MessagePool::Acquire() {
  std::unique_ptr<v1::BatchMessage> message;
  {
    absl::MutexLock lock(&mu_);
    if (!free_.empty()) {
      message = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (message == nullptr) message = std::make_unique<v1::BatchMessage>();
  std::weak_ptr<MessagePool> weak_pool = weak_from_this();
  return std::shared_ptr<v1::BatchMessage>(message.release(),
                                           [weak_pool](v1::BatchMessage* released) {
                                             if (auto pool = weak_pool.lock()) {
                                               pool->Release(released);
                                             } else {
                                               delete released;
                                             }
                                           });
}

void MessagePool::Release(v1::BatchMessage* message) {
  std::unique_ptr<v1::BatchMessage> owned(message);
  absl::MutexLock lock(&mu_);
  if (free_.size() < max_free_) free_.push_back(std::move(owned));
  // Otherwise `owned` deletes the message as the lock is released.
}

void MessagePool::set_max_free(size_t max_free) {
  std::vector<std::unique_ptr<v1::BatchMessage>> dropped;
  absl::MutexLock lock(&mu_);
  max_free_ = max_free;
  while (free_.size() > max_free_) {
    dropped.push_back(std::move(free_.back()));
    free_.pop_back();
  }
}

size_t MessagePool::free_count() const {
  absl::MutexLock lock(&mu_);
  return free_.size();
}

}  // namespace stoker
