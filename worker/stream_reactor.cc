#include "worker/stream_reactor.h"

#include <utility>

#include "common/grpc_status.h"
#include "common/logging.h"

namespace stoker {

namespace pb = ::stoker::v1;

StreamReactor::StreamReactor(Worker* worker) : worker_(worker) { StartRead(&request_); }

void StreamReactor::Send(std::unique_ptr<pb::BatchMessage> batch) {
  pb::BatchMessage* to_write = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (finished_) {
      worker_->message_pool()->Put(std::move(batch));
      return;
    }
    queue_.push_back(std::move(batch));
    if (writing_ != nullptr) return;
    writing_ = std::move(queue_.front());
    queue_.pop_front();
    to_write = writing_.get();
  }
  StartWrite(to_write);
}

void StreamReactor::Fail(const absl::Status& status) {
  STOKER_LOG(WARNING) << "stream failed: " << status;
  FinishFromOutside(ToGrpcStatus(status));
}

bool StreamReactor::MarkFinishedLocked() {
  if (finished_) return false;
  finished_ = true;
  for (auto& batch : queue_) worker_->message_pool()->Put(std::move(batch));
  queue_.clear();
  return true;
}

void StreamReactor::FinishLocked(const grpc::Status& status) {
  if (MarkFinishedLocked()) Finish(status);
}

void StreamReactor::FinishFromOutside(const grpc::Status& status) {
  bool finish;
  {
    absl::MutexLock lock(&mu_);
    finish = MarkFinishedLocked();
  }
  // Not under mu_: outside a reaction, gRPC may run OnDone (which deletes this) before Finish
  // returns, and a lock held here would then be released on a destroyed mutex.
  if (finish) Finish(status);
}

void StreamReactor::OnReadDone(bool ok) {
  if (!ok) {  // The client half-closed (or went away).
    absl::MutexLock lock(&mu_);
    reads_done_ = true;
    if (writing_ == nullptr) FinishLocked(grpc::Status::OK);
    return;
  }
  HandleMessage();
}

void StreamReactor::HandleMessage() {
  if (session_ == nullptr) {
    if (!request_.has_open()) {
      absl::MutexLock lock(&mu_);
      FinishLocked(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                "the first message of a stream must be open"));
      return;
    }
    worker_->OpenSessionAsync(
        request_.open(), this, [this](absl::StatusOr<std::shared_ptr<StreamSession>> session) {
          if (!session.ok()) {
            FinishFromOutside(ToGrpcStatus(session.status()));
            return;
          }
          session_ = *std::move(session);
          StartRead(&request_);
        });
    return;  // The next read starts once the session exists.
  } else if (request_.has_credit()) {
    session_->AddCredit(request_.credit().n());
  } else if (request_.has_ack()) {
    worker_->RecordDelivered(request_.ack());
  }
  StartRead(&request_);
}

void StreamReactor::OnWriteDone(bool ok) {
  std::unique_ptr<pb::BatchMessage> written;
  pb::BatchMessage* next = nullptr;
  {
    absl::MutexLock lock(&mu_);
    written = std::move(writing_);
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "client stream broke"));
    } else if (!finished_ && !queue_.empty() && !reads_done_) {
      writing_ = std::move(queue_.front());
      queue_.pop_front();
      next = writing_.get();
    } else if (reads_done_) {
      FinishLocked(grpc::Status::OK);
    }
  }
  // Outside mu_: the session's lock comes before ours.
  if (session_ != nullptr) session_->OnSent(std::move(written));
  if (next != nullptr) StartWrite(next);
}

void StreamReactor::OnDone() {
  if (session_ != nullptr) worker_->CloseSession(session_);
  worker_->ReleaseStream();
  delete this;
}

}  // namespace stoker
