#include "worker/stream_session.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "trace/span_recorder.h"
#include "worker/batch_timeline.h"

namespace stoker {
namespace {

constexpr absl::Duration kFirstPollDelay = absl::Milliseconds(5);

// `requested` when this worker offers its codec, else raw.
stoker::v1::CompressionChoice Effective(const std::vector<stoker::v1::Compression>& offered,
                                        const stoker::v1::CompressionChoice& requested) {
  if (std::find(offered.begin(), offered.end(), requested.codec()) != offered.end()) {
    return requested;
  }
  stoker::v1::CompressionChoice raw;
  raw.set_codec(stoker::v1::COMPRESSION_NONE);
  return raw;
}

}  // namespace

StreamSession::StreamSession(std::shared_ptr<JobContext> job, uint32_t rank, std::string client_id,
                             BatchSink* sink, MessagePool* pool, std::function<void()> on_capacity,
                             SessionEncoding encoding)
    : job_(std::move(job)),
      rank_(rank),
      client_id_(std::move(client_id)),
      pool_(pool),
      on_capacity_(std::move(on_capacity)),
      offered_(encoding.buffers != nullptr ? std::move(encoding.offered)
                                           : std::vector<stoker::v1::Compression>{}),
      producer_threads_(encoding.producer_threads),
      buffers_(encoding.buffers),
      sink_(sink),
      compression_(Effective(offered_, encoding.requested)) {}

void StreamSession::AddCredit(uint32_t n) {
  {
    absl::MutexLock lock(&mu_);
    // Saturating: credit beyond what any stream could use only has to stay "a lot".
    credit_ = std::min<uint64_t>(credit_ + n, uint64_t{1} << 62);
  }
  on_capacity_();
}

uint32_t StreamSession::WantedTasks(absl::Time now, absl::Time* next_poll, uint64_t max_held) {
  absl::MutexLock lock(&mu_);
  const uint64_t allowed = std::min(credit_, max_held);
  if (sink_ == nullptr || allowed <= outstanding_ || unacked_total_ >= kMaxUnackedBatches) {
    return 0;
  }
  if (now < next_poll_) {
    *next_poll = std::min(*next_poll, next_poll_);
    return 0;
  }
  return static_cast<uint32_t>(std::min<uint64_t>(allowed - outstanding_, UINT32_MAX));
}

uint64_t StreamSession::held_tasks() const {
  absl::MutexLock lock(&mu_);
  return outstanding_;
}

absl::Status StreamSession::Acknowledge(
    const stoker::v1::Ack& ack, google::protobuf::RepeatedPtrField<stoker::v1::TaskId>* accepted) {
  absl::MutexLock lock(&mu_);
  for (const stoker::v1::TaskId& task : ack.tasks()) {
    auto it = unacked_.find(TaskKey{task.job_id(), task.epoch(), task.batch_index()});
    if (it == unacked_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ack.tasks: task (job ", task.job_id(), ", epoch ", task.epoch(), ", batch ",
          task.batch_index(), ") was not sent on this stream or was already acknowledged"));
    }
    if (--it->second == 0) unacked_.erase(it);
    --unacked_total_;
    *accepted->Add() = task;
  }
  return absl::OkStatus();
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
  stoker::v1::CompressionChoice choice;
  {
    absl::MutexLock lock(&mu_);
    if (sink_ == nullptr) {
      if (batch != nullptr) pool_->Put(std::move(batch));
      return;
    }
    if (!status.ok()) {
      sink_->Fail(status);
      return;
    }
    choice = compression_;
  }
  stoker::v1::BatchHeader* header = batch->mutable_header();
  header->clear_offered_compression();
  for (stoker::v1::Compression codec : offered_) header->add_offered_compression(codec);
  header->set_producer_threads(producer_threads_);
  // Outside the lock: compressing takes as long as a few images.
  const bool traced = header->has_trace();
  const int64_t encode_start = traced ? trace::MonotonicNowNanos() : 0;
  absl::StatusOr<OutgoingBatch> encoded = EncodeBatch(std::move(batch), choice, buffers_);
  if (traced && encoded.ok()) {
    encoded->queued_ns = trace::MonotonicNowNanos();
    if (encoded->encoded != nullptr) {
      AppendSpan(trace::Stage::kCompress, encode_start, encoded->queued_ns, "producer",
                 encoded->message->mutable_header());
    }
  }
  absl::MutexLock lock(&mu_);
  if (sink_ == nullptr) {
    if (!encoded.ok()) return;
    pool_->Put(std::move(encoded->message));
    if (encoded->encoded != nullptr) buffers_->Put(std::move(encoded->encoded));
    return;
  }
  if (!encoded.ok()) {
    sink_->Fail(encoded.status());
    return;
  }
  PayloadBytes& bytes = payload_bytes_[CodecName(choice.codec())];
  bytes.raw += encoded->raw_bytes();
  bytes.wire += encoded->wire_bytes();
  queued_bytes_ += encoded->wire_bytes();
  const stoker::v1::TaskId& task = encoded->message->header().task();
  ++unacked_[TaskKey{task.job_id(), task.epoch(), task.batch_index()}];
  ++unacked_total_;
  sink_->Send(*std::move(encoded));
}

absl::Status StreamSession::SetCompression(const stoker::v1::CompressionChoice& choice) {
  if (absl::Status valid = ValidateCompressionChoice(choice, "set_compression"); !valid.ok()) {
    return valid;
  }
  absl::MutexLock lock(&mu_);
  compression_ = Effective(offered_, choice);
  return absl::OkStatus();
}

stoker::v1::CompressionChoice StreamSession::compression() const {
  absl::MutexLock lock(&mu_);
  return compression_;
}

std::map<std::string, PayloadBytes> StreamSession::payload_bytes() const {
  absl::MutexLock lock(&mu_);
  return payload_bytes_;
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
