#include "worker/stream_reactor.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <utility>

#include "common/grpc_status.h"
#include "common/logging.h"
#include "worker/batch_wire.h"

namespace stoker {

namespace pb = ::stoker::v1;

StreamReactor::StreamReactor(Worker* worker) : worker_(worker) {
  // At once, so a client knows its stream was admitted (a refused one ends RESOURCE_EXHAUSTED).
  StartSendInitialMetadata();
  StartRead(&read_buffer_);
}

grpc::ByteBuffer* StreamReactor::NextWriteLocked(bool back_to_back) {
  if (queue_.empty()) return nullptr;
  OutgoingBatch batch = std::move(queue_.front());
  queue_.pop_front();
  writing_bytes_ = batch.wire_bytes();
  batch.message->mutable_header()->set_sent_back_to_back(back_to_back);
  writing_ = BatchToByteBuffer(std::move(batch), worker_->message_pool()->recycler(),
                               worker_->payload_buffers()->recycler());
  write_in_flight_ = true;
  return &writing_;
}

void StreamReactor::Send(OutgoingBatch batch) {
  grpc::ByteBuffer* to_write = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (finished_) {
      worker_->message_pool()->Put(std::move(batch.message));
      return;
    }
    queue_.push_back(std::move(batch));
    if (write_in_flight_) return;
    to_write = NextWriteLocked(/*back_to_back=*/false);
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
  for (OutgoingBatch& batch : queue_) worker_->message_pool()->Put(std::move(batch.message));
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
    if (!write_in_flight_) FinishLocked(grpc::Status::OK);
    return;
  }
  const grpc::Status parsed =
      grpc::SerializationTraits<pb::ClientMessage>::Deserialize(&read_buffer_, &request_);
  if (!parsed.ok()) {
    absl::MutexLock lock(&mu_);
    FinishLocked(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "cannot parse a stoker.v1.ClientMessage: " + parsed.error_message()));
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
    worker_->OpenSessionAsync(request_.open(), this,
                              [this](absl::StatusOr<std::shared_ptr<StreamSession>> session) {
                                if (!session.ok()) {
                                  FinishFromOutside(ToGrpcStatus(session.status()));
                                  return;
                                }
                                session_ = *std::move(session);
                                StartRead(&read_buffer_);
                              });
    return;  // The next read starts once the session exists.
  } else if (request_.has_credit()) {
    session_->AddCredit(request_.credit().n());
  } else if (request_.has_ack()) {
    worker_->RecordDelivered(request_.ack());
  } else if (request_.has_set_compression()) {
    if (absl::Status set = session_->SetCompression(request_.set_compression()); !set.ok()) {
      absl::MutexLock lock(&mu_);
      FinishLocked(ToGrpcStatus(set));
      return;
    }
  }
  StartRead(&read_buffer_);
}

void StreamReactor::OnWriteDone(bool ok) {
  uint64_t written_bytes;
  grpc::ByteBuffer* next = nullptr;
  {
    absl::MutexLock lock(&mu_);
    written_bytes = writing_bytes_;
    writing_.Clear();  // our reference; the payload returns to the pool once gRPC drops its own
    write_in_flight_ = false;
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "client stream broke"));
    } else if (!finished_ && !reads_done_) {
      next = NextWriteLocked(/*back_to_back=*/true);
    } else if (reads_done_) {
      FinishLocked(grpc::Status::OK);
    }
  }
  // Outside mu_: the session's lock comes before ours.
  if (session_ != nullptr) session_->OnSent(written_bytes);
  if (next != nullptr) StartWrite(next);
}

void StreamReactor::OnDone() {
  if (session_ != nullptr) worker_->CloseSession(session_);
  worker_->ReleaseStream();
  delete this;
}

}  // namespace stoker
