#ifndef STOKER_WORKER_STREAM_REACTOR_H_
#define STOKER_WORKER_STREAM_REACTOR_H_

// gRPC glue for Worker.StreamBatches: one reactor per client stream.
//
// Reads: the first message must be Open (else FAILED_PRECONDITION); it creates the session.
// Then Credit goes to the session, Ack to the worker and set_compression to the session (an
// invalid one finishes the stream INVALID_ARGUMENT), until the client half-closes.
// Writes: batches queue in order with one write outstanding (OnWriteDone starts the next). The
// method is registered raw (ByteBuffer in and out): requests are parsed here, and each batch is
// written by BatchToByteBuffer (worker/batch_wire.h) without copying its payload; the message
// returns to the worker's pool when gRPC releases the payload slice. A batch written the moment
// the previous one finished is marked sent_back_to_back (the client times the link by it).
// The stream finishes OK once the client has half-closed and no write is in flight (batches
// still queued then are dropped: their leases expire at the coordinator), or with the error of
// Open or of a failed batch.

#include <grpcpp/grpcpp.h>

#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "stoker/v1/worker.pb.h"
#include "worker/stream_session.h"
#include "worker/worker.h"

namespace stoker {

// Made for a stream the worker admitted (Worker::AdmitStream); releases the admission and
// deletes itself in OnDone. Thread-safe (reactions and producer callbacks race).
class StreamReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
                      public BatchSink {
 public:
  explicit StreamReactor(Worker* worker);

  // BatchSink.
  void Send(OutgoingBatch batch) override;
  void Fail(const absl::Status& status) override;

  // grpc::ServerBidiReactor.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  void HandleMessage();
  // Marks the stream finished (dropping queued batches); false when it already was.
  bool MarkFinishedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finishes with `status` unless already finished. Only inside a reaction (OnReadDone,
  // OnWriteDone), which keeps gRPC from running OnDone meanwhile. REQUIRES: mu_ held.
  void FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the next queued batch into writing_ and returns it, or null when the queue is empty.
  // `back_to_back`: the previous write just finished and this batch was waiting for it.
  grpc::ByteBuffer* NextWriteLocked(bool back_to_back) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finishes with `status` unless already finished, from a thread that is no reaction (the
  // opener, a producer): takes mu_ itself and calls Finish after releasing it; `this` may be
  // gone when it returns.
  void FinishFromOutside(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  Worker* const worker_;
  grpc::ByteBuffer read_buffer_;            // Owned by the read in flight.
  stoker::v1::ClientMessage request_;       // The last message read.
  std::shared_ptr<StreamSession> session_;  // Set once by the first read; reads are sequential.

  absl::Mutex mu_;
  std::deque<OutgoingBatch> queue_ ABSL_GUARDED_BY(mu_);
  // The write in flight (its payload bytes), or none.
  grpc::ByteBuffer writing_ ABSL_GUARDED_BY(mu_);
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t writing_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_REACTOR_H_
