#ifndef STOKER_WORKER_STREAM_BATCHES_SERVER_REACTOR_H_
#define STOKER_WORKER_STREAM_BATCHES_SERVER_REACTOR_H_

// gRPC glue for Worker.StreamBatches: one reactor per client stream.
//
// Reads: the first message must be Open (else FAILED_PRECONDITION); it creates the session.
// Then Credit goes to the session, Ack to the worker (Worker::Acknowledge: one of a task this
// stream was not sent ends it INVALID_ARGUMENT) and set_compression to the session (an invalid
// one ends the stream INVALID_ARGUMENT), until the client half-closes. Protocol errors are
// counted (Worker::CountProtocolError).
// Writes: batches queue in order with one write outstanding (OnWriteDone starts the next); the
// queue holds at most the session's share of the worker's memory (worker/lease_loop.h). Every
// StartWrite and Finish is decided by a StreamWriteOrder under mu_, so Finish never runs with a
// write outstanding (an error meanwhile finishes the stream when the write completes) and no
// write starts after the stream began to end. The
// method is registered raw (ByteBuffer in and out): requests are parsed here, and each batch is
// written by BatchToByteBuffer (worker/batch_wire_encoder.h) without copying its payload; the
// message returns to the worker's pool when gRPC releases the payload slice. A batch written the
// moment the previous one finished is marked sent_back_to_back (the client times the link by it).
// The stream finishes OK once the client has half-closed and no write is in flight (batches
// still queued then are dropped: the worker hands their tasks back when the session closes), or
// with the error of Open, of a failed batch or of a protocol error.

#include <grpcpp/grpcpp.h>

#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/tls/principal.h"
#include "stoker/v1/worker.pb.h"
#include "worker/stream_session.h"
#include "worker/stream_write_order.h"
#include "worker/worker.h"

namespace stoker {

// Made for a stream the worker admitted (Worker::AdmitStream) from a caller who sees `caller`'s
// jobs; releases the admission and deletes itself in OnDone. Thread-safe (reactions and
// producer callbacks race).
class StreamBatchesServerReactor
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
      public BatchSink {
 public:
  StreamBatchesServerReactor(Worker* worker, TenantScope caller);

  // BatchSink.
  void Send(OutgoingBatch batch) override;
  void Fail(const absl::Status& status) override;

  // grpc::ServerBidiReactor.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  void HandleMessage();
  // Starts the next read unless the stream is ending.
  void ContinueReading() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the stream with `status` from inside a reaction (OnReadDone, OnWriteDone), which keeps
  // gRPC from running OnDone meanwhile.
  void EndInReaction(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for a protocol error, counted as `reason`.
  void ProtocolErrorInReaction(ProtocolError reason, const absl::Status& status)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the stream with `status` from a thread that is no reaction (the opener, a producer):
  // calls Finish, when due now, after releasing mu_; `this` may be gone when it returns.
  void EndFromOutside(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns a batch that will not be written (its message and encoded payload) to the pools.
  void Recycle(OutgoingBatch batch);
  // Recycles the queued batches (the stream is ending).
  void DropQueueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts writing the next queued batch when write_order_ allows it. `back_to_back`: the
  // previous write just finished and this batch was waiting for it.
  void StartNextWriteLocked(bool back_to_back) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A traced batch about to be written: its queue span and the clock offset sample's instants.
  void StampTraceLocked(OutgoingBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Worker* const worker_;
  const TenantScope caller_;
  grpc::ByteBuffer read_buffer_;            // Owned by the read in flight.
  stoker::v1::ClientMessage request_;       // The last message read.
  std::shared_ptr<StreamSession> session_;  // Set once by the first read; reads are sequential.

  absl::Mutex mu_;
  std::deque<OutgoingBatch> queue_ ABSL_GUARDED_BY(mu_);
  // The write in flight (its payload bytes), or none.
  grpc::ByteBuffer writing_ ABSL_GUARDED_BY(mu_);
  uint64_t writing_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // The latest Credit that carried the client's clock, and when it arrived (worker clock): the
  // clock fields of the next traced batch (trace.proto, BatchTrace).
  int64_t credit_client_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t credit_received_ns_ ABSL_GUARDED_BY(mu_) = 0;
  StreamWriteOrder write_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_BATCHES_SERVER_REACTOR_H_
