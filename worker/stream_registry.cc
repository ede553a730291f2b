#include "worker/stream_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/payload_codec.h"
#include "common/status_macros.h"

namespace stoker {

namespace pb = ::stoker::v1;

StreamRegistry::StreamRegistry(const WorkerConfig& config, CoordinatorClient* coordinator,
                               MessagePool* pool, PayloadBufferPool* buffers, DatasetIo io,
                               std::function<void()> on_capacity)
    : config_(config),
      coordinator_(coordinator),
      pool_(pool),
      buffers_(buffers),
      io_(std::move(io)),
      on_capacity_(std::move(on_capacity)),
      open_thread_([this] { OpenLoop(); }) {}

StreamRegistry::~StreamRegistry() { Stop(); }

absl::Status StreamRegistry::Admit() {
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

void StreamRegistry::Release() { open_streams_.fetch_sub(1, std::memory_order_relaxed); }

void StreamRegistry::OpenAsync(pb::OpenStream open, BatchSink* sink, OpenDone done,
                               TenantScope caller) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      pending_opens_.push_back(
          PendingOpen{std::move(open), std::move(caller), sink, std::move(done)});
      return;
    }
  }
  done(absl::UnavailableError("worker is stopping"));
}

void StreamRegistry::OpenLoop() {
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
    pending.done(Open(pending.open, pending.caller, pending.sink));
  }
}

absl::StatusOr<std::shared_ptr<StreamSession>> StreamRegistry::Open(const pb::OpenStream& open,
                                                                    const TenantScope& caller,
                                                                    BatchSink* sink) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("worker is stopping");
    if (draining_) return absl::UnavailableError("worker draining: use another worker");
  }
  absl::StatusOr<std::shared_ptr<JobContext>> job = FindOrLoadJob(open.job_id());
  if (!job.ok()) return job.status();
  // Before any other check, whose answer would say that the job exists.
  if (!caller.Sees((*job)->tenant())) return JobNotFound(open.job_id());
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
  encoding.buffers = buffers_;
  auto session = std::make_shared<StreamSession>(*job, open.rank(), open.client_id(), sink, pool_,
                                                 on_capacity_, std::move(encoding));
  absl::MutexLock lock(&mu_);
  sessions_.push_back(session);
  return session;
}

absl::StatusOr<std::shared_ptr<JobContext>> StreamRegistry::FindOrLoadJob(uint64_t job_id) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = jobs_.find(job_id); it != jobs_.end()) return it->second;
  }
  pb::GetJobRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<pb::GetJobResponse> response = coordinator_->GetJob(request);
  // In the words a stream of another tenant's job gets (no prefix naming the coordinator).
  if (absl::IsNotFound(response.status())) return JobNotFound(job_id);
  if (!response.ok()) return response.status();
  absl::StatusOr<std::shared_ptr<JobContext>> job = JobContext::Create(
      job_id, response->spec(), io_,
      response->tenant().empty() ? std::string(kDefaultTenant) : response->tenant());
  if (!job.ok()) return job.status();
  absl::MutexLock lock(&mu_);
  return jobs_.try_emplace(job_id, *std::move(job)).first->second;
}

absl::Status StreamRegistry::CheckBatchFitsMemory(const JobContext& job) const {
  // The fewest batches of a job the worker holds at once to keep its threads busy: one in
  // production and one being sent per thread, and one more. (Queued tasks hold no batch; what
  // waits in a stream's send queue is bounded by the stream's share: worker/lease_loop.h.)
  const uint64_t held = 2 * uint64_t{config_.ResolvedThreads()} + 1;
  const uint64_t budget = config_.BatchMemoryBytes();
  const uint64_t batch = job.max_batch_bytes();  // Field columns at their largest.
  if (batch == 0 || batch <= budget / held) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "job ", job.job_id(), ": ", held, " batches of up to ", batch,
      " bytes (two per producer thread, and one) exceed this worker's memory budget of ", budget,
      " bytes (--memory-bytes",
      config_.decoded_cache_bytes > 0 ? ", less --decoded-cache-bytes" : "", ")"));
}

void StreamRegistry::Forget(const std::shared_ptr<StreamSession>& session) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), session), sessions_.end());
  closed_sessions_sent_bytes_ += session->sent_bytes();
  for (const auto& [codec, bytes] : session->payload_bytes()) {
    closed_sessions_payload_bytes_[codec].raw += bytes.raw;
    closed_sessions_payload_bytes_[codec].wire += bytes.wire;
  }
}

std::vector<std::shared_ptr<StreamSession>> StreamRegistry::EvictJobs(
    const google::protobuf::RepeatedField<uint64_t>& retired) {
  std::vector<std::shared_ptr<StreamSession>> ending;
  absl::MutexLock lock(&mu_);
  for (uint64_t job_id : retired) {
    auto job = jobs_.find(job_id);
    if (job == jobs_.end()) continue;
    job->second->Retire();  // queued work of it is dropped
    jobs_.erase(job);
    const size_t before = ending.size();
    for (const std::shared_ptr<StreamSession>& session : sessions_) {
      if (session->job()->job_id() == job_id) ending.push_back(session);
    }
    STOKER_LOG(INFO) << "dropped job " << ShortId(job_id) << ", retired by the coordinator ("
                     << ending.size() - before << " streams to end)";
  }
  return ending;
}

std::vector<uint64_t> StreamRegistry::job_ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> ids;
  ids.reserve(jobs_.size());
  for (const auto& [job_id, job] : jobs_) ids.push_back(job_id);
  return ids;
}

std::vector<std::shared_ptr<const JobContext>> StreamRegistry::jobs() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<const JobContext>> jobs;
  jobs.reserve(jobs_.size());
  for (const auto& [job_id, job] : jobs_) jobs.push_back(job);
  return jobs;
}

void StreamRegistry::SetTraceSampling(
    const google::protobuf::Map<uint64_t, pb::TraceControl>& trace) {
  absl::MutexLock lock(&mu_);
  for (const auto& [job_id, job] : jobs_) {
    const auto control = trace.find(job_id);
    job->trace().SetSampling(control == trace.end() ? 0 : control->second.sample_one_in());
  }
}

std::vector<std::shared_ptr<StreamSession>> StreamRegistry::LeasingSessions() const {
  absl::MutexLock lock(&mu_);
  if (draining_) return {};
  return sessions_;
}

std::vector<std::shared_ptr<StreamSession>> StreamRegistry::sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_;
}

size_t StreamRegistry::open_sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

StreamTraffic StreamRegistry::traffic() const {
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

void StreamRegistry::BeginDrain() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
}

bool StreamRegistry::AwaitAllClosed(Clock* clock, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto closed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sessions_.empty(); };
  return clock->AwaitWithTimeout(&mu_, absl::Condition(&closed), timeout);
}

void StreamRegistry::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (open_thread_.joinable()) open_thread_.join();
}

}  // namespace stoker
