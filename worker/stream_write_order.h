#ifndef STOKER_WORKER_STREAM_WRITE_ORDER_H_
#define STOKER_WORKER_STREAM_WRITE_ORDER_H_

// The order of a server stream's writes and its end, as gRPC's callback API requires it: at most
// one write outstanding (its completion starts the next), Finish called once and only when no
// write is outstanding, and no write after the stream began to end. The stream reactor
// (worker/stream_batches_server_reactor.h) asks it before every StartWrite and Finish, under its
// own lock; a client's error (a bad message, a bad ack) that arrives while a write is outstanding
// thus ends the stream when that write completes, never under it.

#include "absl/status/status.h"

namespace stoker {

// Thread-compatible.
class StreamWriteOrder {
 public:
  enum class Next {
    kNothing,  // the stream is ending and already finished (or finishes elsewhere)
    kWrite,    // the next write may start
    kFinish,   // call Finish(status()) now
  };

  // A write may start now: none is outstanding and the stream is not ending.
  bool CanWrite() const { return !ending_ && !write_outstanding_; }
  // REQUIRES: CanWrite().
  void WriteStarted() { write_outstanding_ = true; }
  // The stream is to end with `status` (the first status given wins). True when the caller must
  // call Finish(status()) now; false when it was finished already or the outstanding write's
  // completion will finish it (WriteDone returns kFinish).
  bool End(const absl::Status& status);
  // The client half-closed: the stream ends OK (once the outstanding write completes). True
  // when the caller must call Finish(status()) now.
  bool ReadsDone();
  // The outstanding write completed; `ok` false when the stream broke (it then ends
  // UNAVAILABLE).
  Next WriteDone(bool ok);

  bool ending() const { return ending_; }
  // The status to finish with. REQUIRES: ending().
  const absl::Status& status() const { return status_; }

 private:
  void MarkEnding(const absl::Status& status);
  // Marks the stream finished when it is ending and no write is outstanding.
  bool FinishIfIdle();

  bool write_outstanding_ = false;
  bool reads_done_ = false;
  bool ending_ = false;
  bool finished_ = false;
  absl::Status status_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_WRITE_ORDER_H_
