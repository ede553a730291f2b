#ifndef STOKER_WORKER_STREAM_REGISTRY_H_
#define STOKER_WORKER_STREAM_REGISTRY_H_

// The trainer streams a worker serves: admission (--max-streams), opening a session for each
// stream (on an opener thread of its own, because opening may ask the coordinator for the job and
// gRPC callbacks must not block), the job contexts the sessions use, and the traffic they sent.
//
// Job lifecycle: the contexts (source, pipeline, epoch plans) are loaded by the first stream of a
// job and kept until the coordinator retires the job (finished or abandoned): EvictJobs drops
// them and hands back their streams to end with NOT_FOUND, so the worker's memory follows the
// jobs alive, not every job it ever served.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/tls/principal.h"
#include "coordinator/coordinator_client.h"
#include "data/dataset_io.h"
#include "stoker/v1/coordinator.pb.h"
#include "stoker/v1/worker.pb.h"
#include "wire/message_pool.h"
#include "worker/job_context.h"
#include "worker/stream_session.h"
#include "worker/worker_config.h"

namespace stoker {

// Batch payload bytes waiting in open streams' send queues, and written to streams so far.
struct StreamTraffic {
  uint64_t queued_bytes = 0;
  uint64_t sent_bytes_total = 0;
  // Payload bytes handed to streams, before and after compression, by codec name.
  std::map<std::string, PayloadBytes> payload_bytes_total;
};

// Thread-safe.
class StreamRegistry {
 public:
  using OpenDone = std::function<void(absl::StatusOr<std::shared_ptr<StreamSession>>)>;

  // `on_capacity` runs when a session gets credit or frees room (it wakes the lease loop). Jobs'
  // datasets are opened through `io`. `coordinator`, `pool` and `buffers` must outlive this.
  // REQUIRES: config.Validate() is OK.
  StreamRegistry(const WorkerConfig& config, CoordinatorClient* coordinator, MessagePool* pool,
                 PayloadBufferPool* buffers, DatasetIo io, std::function<void()> on_capacity);
  ~StreamRegistry();

  // Admits a new stream: RESOURCE_EXHAUSTED naming --max-streams when config.max_streams are
  // open. Every admitted stream calls Release once when it is done.
  absl::Status Admit();
  void Release();
  // Opens a session for a stream's Open message from `caller`; `done` runs later on the opener
  // thread. Errors: NOT_FOUND for an unknown job, or one of a tenant `caller` does not see (the
  // same message: JobNotFound; the job's tenant is what the coordinator's GetJob said, asked
  // once per job, not per stream), INVALID_ARGUMENT for a
  // rank outside the job's world size or a bad open.compression, RESOURCE_EXHAUSTED for a job
  // whose batches the worker's memory budget cannot hold (--memory-bytes), UNAVAILABLE while
  // draining or stopping.
  void OpenAsync(stoker::v1::OpenStream open, BatchSink* sink, OpenDone done,
                 TenantScope caller = {});
  // The stream of `session` is done: the session is forgotten, its traffic kept. The caller
  // detaches it first and hands back its tasks before this (Drain waits for every session to be
  // forgotten, then reports the hand-backs).
  void Forget(const std::shared_ptr<StreamSession>& session);

  // Drops the contexts of the jobs the coordinator retired (their queued work is dropped);
  // returns their sessions, for the caller to end once nothing is locked.
  std::vector<std::shared_ptr<StreamSession>> EvictJobs(
      const google::protobuf::RepeatedField<uint64_t>& retired);
  // The jobs held a context for.
  std::vector<uint64_t> job_ids() const;
  // The jobs held (until the coordinator retires them).
  std::vector<std::shared_ptr<const JobContext>> jobs() const;
  // Sets each job's trace sampling from the coordinator's trace windows (absent: not traced).
  void SetTraceSampling(const google::protobuf::Map<uint64_t, stoker::v1::TraceControl>& trace);

  // The open sessions the lease loop leases for: none from BeginDrain on.
  std::vector<std::shared_ptr<StreamSession>> LeasingSessions() const;
  std::vector<std::shared_ptr<StreamSession>> sessions() const;
  size_t open_sessions() const;
  StreamTraffic traffic() const;

  // Opens are refused (UNAVAILABLE) and leasing stops; open sessions go on.
  void BeginDrain();
  // Waits on `clock` until every session closed or `timeout` passed; returns whether all did.
  bool AwaitAllClosed(Clock* clock, absl::Duration timeout);
  // Refuses opens and answers the pending ones; joins the opener thread. Idempotent.
  void Stop();

 private:
  struct PendingOpen {
    stoker::v1::OpenStream open;
    TenantScope caller;
    BatchSink* sink;
    OpenDone done;
  };
  void OpenLoop();
  absl::StatusOr<std::shared_ptr<StreamSession>> Open(const stoker::v1::OpenStream& open,
                                                      const TenantScope& caller, BatchSink* sink);
  absl::StatusOr<std::shared_ptr<JobContext>> FindOrLoadJob(uint64_t job_id);
  // RESOURCE_EXHAUSTED naming --memory-bytes when the batches of `job` the worker may hold at
  // once exceed its memory budget.
  absl::Status CheckBatchFitsMemory(const JobContext& job) const;

  const WorkerConfig config_;
  CoordinatorClient* const coordinator_;
  MessagePool* const pool_;
  PayloadBufferPool* const buffers_;
  const DatasetIo io_;
  const std::function<void()> on_capacity_;
  std::atomic<uint32_t> open_streams_{0};  // Admitted and not yet released.

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<PendingOpen> pending_opens_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::shared_ptr<JobContext>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<StreamSession>> sessions_ ABSL_GUARDED_BY(mu_);
  uint64_t closed_sessions_sent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, PayloadBytes> closed_sessions_payload_bytes_ ABSL_GUARDED_BY(mu_);
  std::thread open_thread_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_STREAM_REGISTRY_H_
