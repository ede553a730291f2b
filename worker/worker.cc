#include "worker/worker.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/payload_codec.h"
#include "common/process_limits.h"
#include "common/retry.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

// Batch messages kept for reuse: enough for every producer thread plus a few in flight.
size_t PoolSize(uint32_t threads) { return size_t{threads} * 2 + 4; }

// Smallest reports budget a heartbeat shrinks to (a few tasks).
constexpr size_t kMinReportBytes = 256;

// Encoded size of `task` as an element of a repeated field (tag, length, message).
size_t ReportBytes(const pb::TaskId& task) { return task.ByteSizeLong() + 2; }

}  // namespace

const char* ProtocolErrorName(ProtocolError reason) {
  switch (reason) {
    case ProtocolError::kAckUnsent:
      return "ack_unsent";
    case ProtocolError::kBadMessage:
      return "bad_message";
  }
  return "unknown";
}

Worker::Worker(WorkerConfig config, std::unique_ptr<CoordinatorClient> coordinator, Clock* clock)
    : config_(std::move(config)),
      coordinator_(std::move(coordinator)),
      clock_(clock),
      pool_(PoolSize(config_.ResolvedThreads())),
      payload_buffers_(PoolSize(config_.ResolvedThreads())),
      producer_(config_.ResolvedThreads(), 0, &pool_, clock,
                config_.owns_process ? OwnProcessLimits().cpus : 0),
      open_thread_([this] { OpenLoop(); }) {
  producer_.set_simulation(config_.Simulation());
}

Worker::~Worker() { Stop(); }

void Worker::SetRegistrationObserver(std::function<void(bool registered)> observer) {
  registration_observer_ = std::move(observer);
}

absl::Status Worker::Start(const std::string& advertise_address) {
  {
    absl::MutexLock lock(&mu_);
    advertise_address_ = advertise_address;
  }
  absl::Status status =
      RetryUnavailable(config_.register_backoff, clock_, [this] { return Register(); });
  if (!status.ok()) return status;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  lease_thread_ = std::thread([this] { LeaseLoop(); });
  return absl::OkStatus();
}

absl::Status Worker::Register() {
  pb::RegisterWorkerRequest request;
  {
    absl::MutexLock lock(&mu_);
    request.set_address(advertise_address_);
  }
  request.set_cores(config_.ResolvedThreads());
  request.set_private_to_client(config_.private_to_client);
  request.set_pool(config_.pool);
  absl::StatusOr<pb::RegisterWorkerResponse> response = coordinator_->RegisterWorker(request);
  if (!response.ok()) return response.status();
  {
    absl::MutexLock lock(&mu_);
    worker_id_ = response->worker_id();
    heartbeat_interval_ =
        absl::Milliseconds(std::max<uint32_t>(1, response->heartbeat_interval_ms()));
  }
  producer_.set_worker_id(response->worker_id());
  STOKER_LOG(INFO) << "registered as worker " << ShortId(response->worker_id()) << " at "
                   << request.address();
  SetRegistered(true);
  return absl::OkStatus();
}

void Worker::SetRegistered(bool registered) {
  {
    absl::MutexLock lock(&mu_);
    if (registered_ == registered) return;
    registered_ = registered;
    exhausted_in_a_row_ = 0;
  }
  if (registration_observer_) registration_observer_(registered);
}

bool Worker::registered() const {
  absl::MutexLock lock(&mu_);
  return registered_;
}

void Worker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  coordinator_->Shutdown();
  if (open_thread_.joinable()) open_thread_.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (lease_thread_.joinable()) lease_thread_.join();
  producer_.Stop();
}

void Worker::Drain(absl::Duration deadline) {
  const absl::Time until = clock_->Now() + deadline;
  std::vector<std::shared_ptr<StreamSession>> sessions;
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    STOKER_LOG(INFO) << "draining: " << held_.size() << " tasks held, " << sessions_.size()
                     << " streams";
    auto delivered = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return held_.empty(); };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&delivered), until);
    sessions = sessions_;
  }
  for (const auto& session : sessions) {
    session->End(absl::UnavailableError("worker draining: reconnect to another worker"));
  }
  {
    // Streams end asynchronously; each hands back what it held as it closes.
    absl::MutexLock lock(&mu_);
    auto closed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sessions_.empty(); };
    clock_->AwaitWithTimeout(&mu_, absl::Condition(&closed),
                             std::max(absl::Seconds(1), until - clock_->Now()));
    STOKER_LOG(INFO) << "drained: handing back " << returned_.size() << " tasks, " << held_.size()
                     << " still held by unclosed streams";
  }
  // Every report, in as many heartbeats as it takes (bounded: the lists are).
  for (size_t sent = 0; Heartbeat() && sent < kMaxPendingReports; ++sent) {
  }
}

absl::StatusOr<std::shared_ptr<JobContext>> Worker::FindOrLoadJob(uint64_t job_id) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = jobs_.find(job_id); it != jobs_.end()) return it->second;
  }
  pb::GetJobRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<pb::GetJobResponse> response = coordinator_->GetJob(request);
  if (!response.ok()) return response.status();
  absl::StatusOr<std::shared_ptr<JobContext>> job = JobContext::Create(job_id, response->spec());
  if (!job.ok()) return job.status();
  absl::MutexLock lock(&mu_);
  return jobs_.try_emplace(job_id, *std::move(job)).first->second;
}

void Worker::OpenSessionAsync(pb::OpenStream open, BatchSink* sink, OpenDone done) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      pending_opens_.push_back(PendingOpen{std::move(open), sink, std::move(done)});
      return;
    }
  }
  done(absl::UnavailableError("worker is stopping"));
}

void Worker::OpenLoop() {
  while (true) {
    PendingOpen pending;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_opens_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (pending_opens_.empty()) return;  // Stopping with nothing left to answer.
      pending = std::move(pending_opens_.front());
      pending_opens_.pop_front();
    }
    pending.done(OpenSession(pending.open, pending.sink));
  }
}

absl::StatusOr<std::shared_ptr<StreamSession>> Worker::OpenSession(const pb::OpenStream& open,
                                                                   BatchSink* sink) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("worker is stopping");
    if (draining_) return absl::UnavailableError("worker draining: use another worker");
  }
  absl::StatusOr<std::shared_ptr<JobContext>> job = FindOrLoadJob(open.job_id());
  if (!job.ok()) return job.status();
  RETURN_IF_ERROR(CheckBatchFitsMemory(**job));
  const uint32_t world_size = (*job)->spec().world_size();
  if (open.rank() >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: must be < world_size (", world_size, "), got ", open.rank()));
  }
  RETURN_IF_ERROR(ValidateCompressionChoice(open.compression(), "open.compression"));
  SessionEncoding encoding;
  encoding.offered = config_.OfferedCodecs().value_or(std::vector<pb::Compression>{});
  encoding.requested = open.compression();
  encoding.producer_threads = config_.ResolvedThreads();
  encoding.buffers = &payload_buffers_;
  auto session = std::make_shared<StreamSession>(
      *job, open.rank(), open.client_id(), sink, &pool_, [this] { Wake(); }, std::move(encoding));
  absl::MutexLock lock(&mu_);
  sessions_.push_back(session);
  return session;
}

absl::Status Worker::CheckBatchFitsMemory(const JobContext& job) const {
  // The fewest batches of a job the worker holds at once to keep its threads busy: one in
  // production and one being sent per thread, and one more. (Queued tasks hold no batch; what
  // waits in a stream's send queue is bounded by the stream's share, MaxHeldTasks.)
  const uint64_t held = 2 * uint64_t{config_.ResolvedThreads()} + 1;
  const uint64_t budget = config_.ResolvedMemoryBytes();
  if (job.batch_bytes() == 0 || job.batch_bytes() <= budget / held) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "job ", job.job_id(), ": ", held, " batches of ", job.batch_bytes(),
      " bytes (two per producer thread, and one) exceed this worker's memory budget of ", budget,
      " bytes (--memory-bytes)"));
}

absl::Status Worker::AdmitStream() {
  uint32_t open = open_streams_.load(std::memory_order_relaxed);
  do {
    if (open >= config_.max_streams) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "worker serves ", open, " streams, its limit (--max-streams=", config_.max_streams,
          "); retry later or use another worker"));
    }
  } while (!open_streams_.compare_exchange_weak(open, open + 1, std::memory_order_relaxed));
  return absl::OkStatus();
}

void Worker::ReleaseStream() { open_streams_.fetch_sub(1, std::memory_order_relaxed); }

void Worker::CloseSession(const std::shared_ptr<StreamSession>& session) {
  session->Detach();
  absl::MutexLock lock(&mu_);
  sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), session), sessions_.end());
  closed_sessions_sent_bytes_ += session->sent_bytes();
  for (const auto& [codec, bytes] : session->payload_bytes()) {
    closed_sessions_payload_bytes_[codec].raw += bytes.raw;
    closed_sessions_payload_bytes_[codec].wire += bytes.wire;
  }
  size_t handed_back = 0;
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second != session.get()) {
      ++it;
      continue;
    }
    pb::TaskId& task = returned_.emplace_back();
    task.set_job_id(std::get<0>(it->first));
    task.set_epoch(std::get<1>(it->first));
    task.set_batch_index(std::get<2>(it->first));
    it = held_.erase(it);
    ++handed_back;
  }
  if (handed_back > 0) {
    STOKER_LOG(INFO) << "stream of job " << session->job()->job_id() << " rank " << session->rank()
                     << " ended; handing back " << handed_back << " unacknowledged tasks";
  }
}

absl::Status Worker::Acknowledge(StreamSession& session, const pb::Ack& ack) {
  google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
  absl::Status status = session.Acknowledge(ack, &accepted);
  if (!status.ok()) CountProtocolError(ProtocolError::kAckUnsent);
  absl::MutexLock lock(&mu_);
  for (const pb::TaskId& task : accepted) held_.erase(KeyOf(task));
  KeepReportsLocked(&delivered_, accepted);
  return status;
}

void Worker::CountProtocolError(ProtocolError reason) {
  protocol_errors_[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t Worker::protocol_errors(ProtocolError reason) const {
  return protocol_errors_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
}

void Worker::KeepReportsLocked(std::vector<pb::TaskId>* list,
                               const google::protobuf::RepeatedPtrField<pb::TaskId>& tasks) {
  list->insert(list->end(), tasks.begin(), tasks.end());
  if (list->size() <= kMaxPendingReports) return;
  const size_t dropped = list->size() - kMaxPendingReports;
  list->erase(list->begin(), list->begin() + static_cast<ptrdiff_t>(dropped));
  STOKER_LOG(WARNING) << "dropped the " << dropped << " oldest of " << kMaxPendingReports
                      << " unsent task reports; their leases expire at the coordinator";
}

Worker::TaskKey Worker::KeyOf(const pb::TaskId& task) {
  return {task.job_id(), task.epoch(), task.batch_index()};
}

uint64_t Worker::worker_id() const {
  absl::MutexLock lock(&mu_);
  return worker_id_;
}

Worker::StreamTraffic Worker::traffic() const {
  absl::MutexLock lock(&mu_);
  StreamTraffic traffic{0, closed_sessions_sent_bytes_, closed_sessions_payload_bytes_};
  for (const auto& session : sessions_) {
    traffic.queued_bytes += session->queued_bytes();
    traffic.sent_bytes_total += session->sent_bytes();
    for (const auto& [codec, bytes] : session->payload_bytes()) {
      traffic.payload_bytes_total[codec].raw += bytes.raw;
      traffic.payload_bytes_total[codec].wire += bytes.wire;
    }
  }
  return traffic;
}

pb::WorkerStats Worker::stats() const {
  pb::WorkerStats stats;
  stats.set_batches_produced(producer_.batches_produced());
  stats.set_samples_produced(producer_.samples_produced());
  producer_.ReportRecent(&stats);
  absl::MutexLock lock(&mu_);
  stats.set_open_streams(static_cast<uint32_t>(sessions_.size()));
  return stats;
}

void Worker::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

void Worker::HeartbeatLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto due = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ ||
               (coordinator_reachable_ && registered_ && (!returned_.empty() || reports_backlog_));
      };
      clock_->AwaitWithTimeout(&mu_, absl::Condition(&due), heartbeat_interval_);
      if (stopping_) return;
    }
    if (registered()) {
      Heartbeat();
    } else if (absl::Status status = Register(); !status.ok()) {
      STOKER_LOG(WARNING) << "registering again failed: " << status;
    }
  }
}

void Worker::TakeReportsLocked(pb::WorkerHeartbeatRequest* request) {
  // What the rest of the request (stats, the jobs held) leaves of half the smallest limit.
  const size_t rest = request->ByteSizeLong();
  size_t budget =
      std::min(report_budget_, rest < kHeartbeatBytes ? kHeartbeatBytes - rest : kMinReportBytes);
  bool left_behind = false;
  for (auto [list, field] : {std::pair{&returned_, request->mutable_returned()},
                             std::pair{&delivered_, request->mutable_delivered()}}) {
    while (!list->empty() && ReportBytes(list->back()) <= budget) {
      budget -= ReportBytes(list->back());
      *field->Add() = std::move(list->back());
      list->pop_back();
    }
    left_behind = left_behind || !list->empty();
  }
  reports_backlog_ = left_behind;
}

bool Worker::Heartbeat() {
  pb::WorkerHeartbeatRequest request;
  producer_.RecordProcessCpu();
  *request.mutable_stats() = stats();
  {
    absl::MutexLock lock(&mu_);
    request.set_worker_id(worker_id_);
    for (const auto& [job_id, job] : jobs_) request.add_jobs(job_id);
    TakeReportsLocked(&request);
  }
  absl::StatusOr<pb::WorkerHeartbeatResponse> response = coordinator_->WorkerHeartbeat(request);
  if (response.ok()) {
    std::vector<std::shared_ptr<StreamSession>> ending;
    absl::Cleanup end_streams = [&ending] {  // outside the lock: ending calls into gRPC
      for (const std::shared_ptr<StreamSession>& session : ending) {
        session->End(absl::NotFoundError(absl::StrCat(
            "job ", ShortId(session->job()->job_id()),
            " is no longer on the coordinator (retired as finished or idle, or lost with the "
            "coordinator's state): open it again")));
      }
    };
    absl::MutexLock lock(&mu_);
    coordinator_reachable_ = true;
    exhausted_in_a_row_ = 0;
    report_budget_ = std::min(kHeartbeatBytes, report_budget_ * 2);
    for (const pb::TaskId& task : response->drop_leases()) held_.erase(KeyOf(task));
    if (response->drop_leases_size() > 0) {
      STOKER_LOG(INFO) << "coordinator revoked " << response->drop_leases_size()
                       << " expired leases of this worker";
    }
    ending = EvictJobsLocked(response->retired_jobs());
    for (const auto& [job_id, job] : jobs_) {
      const auto control = response->trace().find(job_id);
      job->trace().SetSampling(
          control == response->trace().end() ? 0 : control->second.sample_one_in());
    }
    return reports_backlog_;
  }
  {
    // Not reported: keep for the next heartbeat. Reports are harmless whoever gets them: a
    // delivered report only releases a lease held by the id it names, hand-backs only touch
    // leases of that id, and ids never repeat across coordinator incarnations.
    absl::MutexLock lock(&mu_);
    coordinator_reachable_ = false;  // back to the heartbeat interval until one succeeds
    // Nobody renews a trace window meanwhile (TraceControl): stop recording.
    for (const auto& [job_id, job] : jobs_) job->trace().SetSampling(0);
    KeepReportsLocked(&delivered_, request.delivered());
    KeepReportsLocked(&returned_, request.returned());
  }
  OnHeartbeatFailed(response.status());
  return false;
}

void Worker::OnHeartbeatFailed(const absl::Status& status) {
  bool lost = status.code() == absl::StatusCode::kNotFound ||
              status.code() == absl::StatusCode::kFailedPrecondition;
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    absl::MutexLock lock(&mu_);
    report_budget_ = std::max(kMinReportBytes, report_budget_ / 2);
    lost = ++exhausted_in_a_row_ >= kExhaustedBeforeRegister;
  }
  if (!lost) {
    STOKER_LOG(WARNING) << "heartbeat failed: " << status;
    return;
  }
  STOKER_LOG(WARNING) << "coordinator refused this worker's heartbeats (" << status
                      << "); registering again";
  SetRegistered(false);
  if (absl::Status registered = Register(); !registered.ok()) {
    STOKER_LOG(WARNING) << "registering again failed: " << registered;
  }
}

std::vector<std::shared_ptr<StreamSession>> Worker::EvictJobsLocked(
    const google::protobuf::RepeatedField<uint64_t>& retired) {
  std::vector<std::shared_ptr<StreamSession>> ending;
  for (uint64_t job_id : retired) {
    auto job = jobs_.find(job_id);
    if (job == jobs_.end()) continue;
    job->second->Retire();  // queued work of it is dropped
    jobs_.erase(job);
    // Its leases went with it: nothing to hand back or report.
    held_.erase(held_.lower_bound({job_id, 0, 0}), held_.lower_bound({job_id + 1, 0, 0}));
    const size_t before = ending.size();
    for (const std::shared_ptr<StreamSession>& session : sessions_) {
      if (session->job()->job_id() == job_id) ending.push_back(session);
    }
    STOKER_LOG(INFO) << "dropped job " << ShortId(job_id) << ", retired by the coordinator ("
                     << ending.size() - before << " streams to end)";
  }
  return ending;
}

void Worker::LeaseLoop() {
  while (true) {
    std::vector<std::shared_ptr<StreamSession>> sessions;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      wake_ = false;
      if (!draining_) sessions = sessions_;
    }
    const absl::Time now = clock_->Now();
    absl::Time next_poll = now + config_.max_lease_poll;
    uint64_t held_bytes = 0;
    for (const auto& session : sessions) {
      held_bytes += session->held_tasks() * HeldBytesPerTask(*session);
    }
    for (const auto& session : sessions) {
      const uint64_t max_held = MaxHeldTasks(*session, sessions.size(), held_bytes);
      // Never more than the producer's bounded queue takes.
      const uint32_t wanted = static_cast<uint32_t>(
          std::min<size_t>(session->WantedTasks(now, &next_poll, max_held), producer_.room()));
      if (wanted > 0) held_bytes += LeaseFor(session, wanted) * HeldBytesPerTask(*session);
    }
    absl::MutexLock lock(&mu_);
    auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return wake_ || stopping_; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&woken), next_poll);
  }
}

uint64_t Worker::HeldBytesPerTask(const StreamSession& session) {
  // A compressed batch keeps its raw tensor beside the encoded copy until written; codecs bound
  // their output near the input's size.
  const bool compressed = session.compression().codec() != pb::COMPRESSION_NONE;
  return std::max<uint64_t>(1, session.job()->batch_bytes() * (compressed ? 2 : 1));
}

uint64_t Worker::MaxHeldTasks(const StreamSession& session, size_t sessions,
                              uint64_t held_bytes) const {
  const uint64_t budget = config_.ResolvedMemoryBytes();
  const uint64_t batch = HeldBytesPerTask(session);
  const uint64_t share = std::max<uint64_t>(1, budget / (sessions + 1) / batch);
  const uint64_t free = held_bytes < budget ? (budget - held_bytes) / batch : 0;
  const uint64_t held = session.held_tasks();
  // At least one batch whenever the budget has room for it, so that every stream moves.
  return std::min(share, held + free);
}

uint32_t Worker::LeaseFor(const std::shared_ptr<StreamSession>& session, uint32_t wanted) {
  pb::LeaseTasksRequest request;
  request.set_worker_id(worker_id());
  request.set_job_id(session->job()->job_id());
  request.set_rank(session->rank());
  request.set_max_tasks(wanted);
  LeaseStart lease_start;  // for traced batches' lease_wait spans; no clock read when untraced
  if (trace::SpanRecorder& recorder = session->job()->trace(); recorder.sampling() != 0) {
    lease_start = LeaseStart{recorder.Now(), trace::SpanRecorder::CurrentThreadId()};
    recorder.NameCurrentThread(absl::StrCat("lease loop ", lease_start.thread_id));
  }
  absl::StatusOr<pb::LeaseTasksResponse> response = coordinator_->LeaseTasks(request);
  if (!response.ok()) {
    STOKER_LOG(DEBUG) << "lease failed: " << response.status();
    session->OnLeased(0, clock_->Now(), config_.max_lease_poll);
    return 0;
  }
  session->OnLeased(static_cast<uint32_t>(response->leases_size()), clock_->Now(),
                    config_.max_lease_poll);
  {
    absl::MutexLock lock(&mu_);
    // A session closed meanwhile has already handed back what it held: hand these back too.
    const bool closed = session->detached();
    for (const pb::Lease& lease : response->leases()) {
      if (closed) {
        returned_.push_back(lease.task());
      } else {
        held_[KeyOf(lease.task())] = session.get();
      }
    }
  }
  for (const pb::Lease& lease : response->leases()) {
    producer_.Submit(
        session->job(), lease.task(),
        [session](absl::Status status, std::unique_ptr<pb::BatchMessage> batch) {
          session->OnProduced(std::move(status), std::move(batch));
        },
        lease_start);
  }
  return static_cast<uint32_t>(response->leases_size());
}

}  // namespace stoker
