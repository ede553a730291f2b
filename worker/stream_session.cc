#include "worker/stream_session.h"

#include <algorithm>
#include <utility>

namespace stoker {
namespace {

constexpr absl::Duration kFirstPollDelay = absl::Milliseconds(5);

}  // namespace

StreamSession::StreamSession(std::shared_ptr<JobContext> job, uint32_t rank, std::string client_id,
                             BatchSink* sink, BatchMessagePool* pool,
                             std::function<void()> on_capacity)
    : job_(std::move(job)),
      rank_(rank),
      client_id_(std::move(client_id)),
      pool_(pool),
      on_capacity_(std::move(on_capacity)),
      sink_(sink) {}

void StreamSession::AddCredit(uint32_t n) {
  {
    absl::MutexLock lock(&mu_);
    credit_ += n;
  }
  on_capacity_();
}

uint32_t StreamSession::WantedTasks(absl::Time now, absl::Time* next_poll) {
  absl::MutexLock lock(&mu_);
  if (sink_ == nullptr || credit_ <= outstanding_) return 0;
  if (now < next_poll_) {
    *next_poll = std::min(*next_poll, next_poll_);
    return 0;
  }
  return static_cast<uint32_t>(std::min<uint64_t>(credit_ - outstanding_, UINT32_MAX));
}

void StreamSession::OnLeased(uint32_t n, absl::Time now, absl::Duration max_poll) {
  absl::MutexLock lock(&mu_);
  outstanding_ += n;
  if (n > 0) {
    poll_delay_ = absl::ZeroDuration();
    next_poll_ = absl::InfinitePast();
  } else {
    poll_delay_ = std::min(max_poll, std::max(kFirstPollDelay, poll_delay_ * 2));
    next_poll_ = now + poll_delay_;
  }
}

void StreamSession::OnProduced(absl::Status status,
                               std::unique_ptr<stoker::v1::BatchMessage> batch) {
  absl::MutexLock lock(&mu_);
  if (sink_ == nullptr) {
    if (batch != nullptr) pool_->Put(std::move(batch));
    return;
  }
  if (!status.ok()) {
    sink_->Fail(status);
    return;
  }
  queued_bytes_ += batch->data().size();
  sink_->Send(std::move(batch));
}

void StreamSession::OnSent(uint64_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    queued_bytes_ -= std::min(queued_bytes_, bytes);
    sent_bytes_ += bytes;
    if (credit_ > 0) --credit_;
    if (outstanding_ > 0) --outstanding_;
  }
  on_capacity_();
}

void StreamSession::End(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (sink_ != nullptr) sink_->Fail(status);
}

void StreamSession::Detach() {
  absl::MutexLock lock(&mu_);
  sink_ = nullptr;
}

uint64_t StreamSession::queued_bytes() const {
  absl::MutexLock lock(&mu_);
  return queued_bytes_;
}

uint64_t StreamSession::sent_bytes() const {
  absl::MutexLock lock(&mu_);
  return sent_bytes_;
}

bool StreamSession::detached() const {
  absl::MutexLock lock(&mu_);
  return sink_ == nullptr;
}

}  // namespace stoker
