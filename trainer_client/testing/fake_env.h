#ifndef STOKER_TRAINER_CLIENT_TESTING_FAKE_ENV_H_
#define STOKER_TRAINER_CLIENT_TESTING_FAKE_ENV_H_

// In-memory fakes of the Loader's environment (coordinator client, worker streams), so that
// loader tests drive the protocol by hand without a network. Every Await* waits up to 10 s (a
// safety net, not a timing assertion) and returns false if the condition never came true.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
#include "trainer_client/worker_stream.h"
#include "wire/testing/batch_messages.h"  // MakeBatchMessage, MakeCompressedBatchMessage

namespace stoker::testing {

// Thread-safe.
class FakeCoordinator : public CoordinatorClient {
 public:
  FakeCoordinator();

  absl::StatusOr<v1::OpenJobResponse> OpenJob(const v1::OpenJobRequest& request) override;
  absl::StatusOr<v1::ClientHeartbeatResponse> ClientHeartbeat(
      const v1::ClientHeartbeatRequest& request) override;

  void set_open_job_result(absl::StatusOr<v1::OpenJobResponse> result);
  void set_heartbeat_error(absl::Status status);
  void set_state(v1::JobState state);
  void AddWorker(uint64_t id, const std::string& address);
  // Heartbeat responses say the job is traced, 1 task in `one_in`, and answer a request's
  // client_clock_ns with the coordinator's (the real monotonic clock) received/sent instants.
  void set_trace(uint32_t one_in);
  // The spans successful heartbeats carried (ClientHeartbeatRequest.trace), in order.
  std::vector<v1::TraceProcessSpans> traced() const;
  // The stats of the last successful heartbeat.
  v1::ClientStats last_stats() const;

  int open_job_calls() const;
  bool AwaitOpenJobCalls(int n);
  v1::OpenJobRequest last_open_job_request() const;
  // Every task reported received by successful heartbeats, in order.
  std::vector<v1::TaskId> received() const;
  bool AwaitReceived(size_t n);
  bool AwaitHeartbeats(int n);
  // Heartbeats received so far (failed ones included), and waiting until there are `total`.
  int heartbeats() const;
  bool AwaitHeartbeatCount(int total);

 private:
  mutable absl::Mutex mu_;
  absl::StatusOr<v1::OpenJobResponse> open_job_result_ ABSL_GUARDED_BY(mu_);
  v1::OpenJobRequest last_open_job_request_ ABSL_GUARDED_BY(mu_);
  int open_job_calls_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status heartbeat_error_ ABSL_GUARDED_BY(mu_);
  v1::ClientHeartbeatResponse heartbeat_response_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::TaskId> received_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::TraceProcessSpans> traced_ ABSL_GUARDED_BY(mu_);
  v1::ClientStats last_stats_ ABSL_GUARDED_BY(mu_);
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
};

// The test's side of one opened stream. Thread-safe.
class FakeStream {
 public:
  FakeStream(std::string address, v1::OpenStream open, WorkerStreamHooks hooks)
      : address_(std::move(address)), open_(std::move(open)), hooks_(std::move(hooks)) {}

  const std::string& address() const { return address_; }
  const v1::OpenStream& open() const { return open_; }

  // Sends a batch to the client (on the calling thread). Ignored once the stream ended.
  void Deliver(std::shared_ptr<v1::BatchMessage> message);
  // Ends the stream with `status` (as if the worker died or finished it). Idempotent.
  void End(const absl::Status& status);

  uint64_t credits() const;
  std::vector<v1::TaskId> acks() const;
  bool closed() const;
  bool ended() const;
  bool AwaitCredits(uint64_t n);
  bool AwaitAcks(size_t n);
  std::vector<v1::CompressionChoice> compression_requests() const;

  // WorkerStream side.
  void GrantCredit(uint32_t n);
  void Ack(const v1::TaskId& task);
  void SetCompression(const v1::CompressionChoice& choice);
  void Close();

 private:
  const std::string address_;
  const v1::OpenStream open_;
  const WorkerStreamHooks hooks_;
  mutable absl::Mutex mu_;
  uint64_t credits_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::TaskId> acks_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CompressionChoice> compression_requests_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex deliver_mu_;  // serializes Deliver/End: one reader thread per real stream
};

// Thread-safe. Close() ends a stream at once with OK (a well-behaved worker).
class FakeWorkerStreamFactory : public WorkerStreamFactory {
 public:
  std::unique_ptr<WorkerStream> Open(const std::string& address, const v1::OpenStream& open,
                                     WorkerStreamHooks hooks) override;

  size_t stream_count() const;
  // The index-th stream opened (from 0), waiting for it; nullptr if it never came.
  std::shared_ptr<FakeStream> AwaitStream(size_t index);

 private:
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<FakeStream>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker::testing

#endif  // STOKER_TRAINER_CLIENT_TESTING_FAKE_ENV_H_
