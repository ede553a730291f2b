#include "worker/stream_batches_server_reactor.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <utility>

#include "common/grpc_status.h"
#include "common/logging.h"
#include "trace/span_recorder.h"
#include "worker/batch_timeline.h"
#include "worker/batch_wire_encoder.h"

namespace stoker {

namespace pb = ::stoker::v1;

StreamBatchesServerReactor::StreamBatchesServerReactor(Worker* worker, TenantScope caller)
    : worker_(worker), caller_(std::move(caller)) {
  // At once, so a client knows its stream was admitted (a refused one ends RESOURCE_EXHAUSTED).
  StartSendInitialMetadata();
  StartRead(&read_buffer_);
}

// StartWrite, StartRead and in-reaction Finish run under mu_: gRPC never runs a read or write
// reaction inline in the call that starts it (grpcpp dispatches them), and OnDone waits for the
// reaction in progress, so holding mu_ cannot deadlock, and a concurrent end cannot slip in
// between deciding to write (or read) and starting it.
void StreamBatchesServerReactor::StartNextWriteLocked(bool back_to_back) {
  if (!write_order_.CanWrite() || queue_.empty()) return;
  OutgoingBatch batch = std::move(queue_.front());
  queue_.pop_front();
  writing_bytes_ = batch.wire_bytes();
  batch.message->mutable_header()->set_sent_back_to_back(back_to_back);
  if (batch.message->header().has_trace()) StampTraceLocked(batch);
  writing_ = BatchToByteBuffer(std::move(batch), worker_->message_pool()->recycler(),
                               worker_->payload_buffers()->recycler());
  write_order_.WriteStarted();
  StartWrite(&writing_);
}

void StreamBatchesServerReactor::StampTraceLocked(OutgoingBatch& batch) {
  const int64_t now = trace::MonotonicNowNanos();
  pb::BatchHeader* header = batch.message->mutable_header();
  AppendSpan(trace::Stage::kQueue, batch.queued_ns, now, "stream writer", header);
  pb::BatchTrace* batch_trace = header->mutable_trace();
  batch_trace->set_credit_client_ns(credit_client_ns_);
  batch_trace->set_credit_received_ns(credit_received_ns_);
  batch_trace->set_send_ns(now);
}

void StreamBatchesServerReactor::Send(OutgoingBatch batch) {
  absl::MutexLock lock(&mu_);
  if (write_order_.ending()) {
    Recycle(std::move(batch));
    return;
  }
  queue_.push_back(std::move(batch));
  StartNextWriteLocked(/*back_to_back=*/false);
}

void StreamBatchesServerReactor::Fail(const absl::Status& status) {
  STOKER_LOG(WARNING) << "stream failed: " << status;
  EndFromOutside(status);
}

void StreamBatchesServerReactor::Recycle(OutgoingBatch batch) {
  worker_->message_pool()->Put(std::move(batch.message));
  if (batch.encoded != nullptr) worker_->payload_buffers()->Put(std::move(batch.encoded));
}

void StreamBatchesServerReactor::DropQueueLocked() {
  for (OutgoingBatch& batch : queue_) Recycle(std::move(batch));
  queue_.clear();
}

void StreamBatchesServerReactor::EndInReaction(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  DropQueueLocked();
  if (write_order_.End(status)) Finish(ToGrpcStatus(write_order_.status()));
}

void StreamBatchesServerReactor::ProtocolErrorInReaction(ProtocolError reason,
                                                         const absl::Status& status) {
  worker_->CountProtocolError(reason);
  STOKER_LOG(WARNING) << "stream ended for a protocol error (" << ProtocolErrorName(reason)
                      << "): " << status;
  EndInReaction(status);
}

void StreamBatchesServerReactor::EndFromOutside(const absl::Status& status) {
  grpc::Status finish;
  {
    absl::MutexLock lock(&mu_);
    DropQueueLocked();
    if (!write_order_.End(status)) return;
    finish = ToGrpcStatus(write_order_.status());
  }
  // Not under mu_: outside a reaction, gRPC may run OnDone (which deletes this) before Finish
  // returns, and a lock held here would then be released on a destroyed mutex.
  Finish(finish);
}

void StreamBatchesServerReactor::ContinueReading() {
  absl::MutexLock lock(&mu_);
  if (!write_order_.ending()) StartRead(&read_buffer_);
}

void StreamBatchesServerReactor::OnReadDone(bool ok) {
  if (!ok) {  // The client half-closed (or went away).
    absl::MutexLock lock(&mu_);
    DropQueueLocked();
    if (write_order_.ReadsDone()) Finish(ToGrpcStatus(write_order_.status()));
    return;
  }
  const grpc::Status parsed =
      grpc::SerializationTraits<pb::ClientMessage>::Deserialize(&read_buffer_, &request_);
  if (!parsed.ok()) {
    ProtocolErrorInReaction(ProtocolError::kBadMessage,
                            absl::InvalidArgumentError("cannot parse a stoker.v1.ClientMessage: " +
                                                       parsed.error_message()));
    return;
  }
  HandleMessage();
}

void StreamBatchesServerReactor::HandleMessage() {
  if (session_ == nullptr) {
    if (!request_.has_open()) {
      ProtocolErrorInReaction(
          ProtocolError::kBadMessage,
          absl::FailedPreconditionError("the first message of a stream must be open"));
      return;
    }
    worker_->OpenSessionAsync(
        request_.open(), this,
        [this](absl::StatusOr<std::shared_ptr<StreamSession>> session) {
          if (!session.ok()) {
            EndFromOutside(session.status());
            return;
          }
          session_ = *std::move(session);
          ContinueReading();
        },
        caller_);
    return;  // The next read starts once the session exists.
  } else if (request_.has_credit()) {
    if (request_.credit().client_clock_ns() != 0) {  // the client traces: an offset sample
      absl::MutexLock lock(&mu_);
      credit_client_ns_ = request_.credit().client_clock_ns();
      credit_received_ns_ = trace::MonotonicNowNanos();
    }
    session_->AddCredit(request_.credit().n());
  } else if (request_.has_ack()) {
    if (absl::Status acked = worker_->Acknowledge(*session_, request_.ack()); !acked.ok()) {
      STOKER_LOG(WARNING) << "stream ended for a protocol error (ack_unsent): " << acked;
      EndInReaction(acked);  // Counted by Acknowledge.
      return;
    }
  } else if (request_.has_set_compression()) {
    if (absl::Status set = session_->SetCompression(request_.set_compression()); !set.ok()) {
      ProtocolErrorInReaction(ProtocolError::kBadMessage, set);
      return;
    }
  }
  ContinueReading();
}

void StreamBatchesServerReactor::OnWriteDone(bool ok) {
  uint64_t written_bytes;
  {
    absl::MutexLock lock(&mu_);
    written_bytes = writing_bytes_;
    writing_.Clear();  // our reference; the payload returns to the pool once gRPC drops its own
    switch (write_order_.WriteDone(ok)) {
      case StreamWriteOrder::Next::kFinish:
        DropQueueLocked();
        Finish(ToGrpcStatus(write_order_.status()));
        break;
      case StreamWriteOrder::Next::kWrite:
        StartNextWriteLocked(/*back_to_back=*/true);
        break;
      case StreamWriteOrder::Next::kNothing:
        break;
    }
  }
  // Outside mu_: the session's lock comes before ours.
  if (session_ != nullptr) session_->OnSent(written_bytes);
}

void StreamBatchesServerReactor::OnDone() {
  if (session_ != nullptr) worker_->CloseSession(session_);
  worker_->ReleaseStream();
  delete this;
}

}  // namespace stoker
