// LoaderImpl: opening, consuming, stopping, statistics. Heartbeats and stream management are in
// loader_streams.cc.

#include "trainer_client/loader_impl.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/heap_tuning.h"
#include "common/logging.h"
#include "common/payload_codec.h"
#include "common/read_wakeup_tuning.h"
#include "common/retry.h"
#include "common/status_macros.h"
#include "common/tls/tls_config.h"
#include "plan/rank_sequence.h"
#include "plan/resume_token.h"
#include "stoker/v1/resume.pb.h"

namespace stoker {
namespace {

// How long Stop lets the workers end half-closed streams before cancelling them.
constexpr absl::Duration kCloseGrace = absl::Seconds(2);

std::string RandomClientId() {
  absl::BitGen gen;
  return absl::StrCat(absl::Hex(absl::Uniform<uint64_t>(gen), absl::kZeroPad16));
}

EpochBuffer::Config BufferConfig(const LoaderOptions& options, const v1::OpenJobResponse& job) {
  EpochBuffer::Config config;
  config.job_id = job.job_id();
  config.epochs = options.spec.epochs();
  config.batches_per_epoch = job.batches_per_epoch_per_rank();
  config.rank = options.rank;
  config.world_size = options.spec.world_size();
  config.ordered = options.ordered;
  const v1::ResumePoint& start = job.start();
  if (start.resumed()) {
    config.resumed = true;
    config.first_epoch = start.epoch();
    config.first_deal.assign(start.deal().begin(), start.deal().end());
    config.first_consumed = ConsumedBeforeResume(start);
  }
  return config;
}

// INVALID_ARGUMENT when the coordinator's resume point does not fit the job (a batch of the deal
// listed twice or past the limit).
absl::Status CheckStart(const LoaderOptions& options, const v1::OpenJobResponse& job) {
  const v1::ResumePoint& start = job.start();
  if (!start.resumed()) return absl::OkStatus();
  return RankSequence::Resumed(options.rank, options.spec.world_size(),
                               job.batches_per_epoch_per_rank(), options.spec.epochs(),
                               start.epoch(), {start.deal().begin(), start.deal().end()})
      .CheckResumed("OpenJobResponse.start.deal");
}

bool SameTask(const v1::TaskId& a, const v1::TaskId& b) {
  return a.job_id() == b.job_id() && a.epoch() == b.epoch() && a.batch_index() == b.batch_index();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoaderImpl>> LoaderImpl::Open(LoaderOptions options, LoaderEnv env) {
  RETURN_IF_ERROR(options.Validate());
  if (options.retain_heap_memory) RetainFreedHeapMemory();
  if (options.tune_read_wakeups) EnableGrpcReadExperiments();
  if (options.client_id.empty()) options.client_id = RandomClientId();
  if (env.clock == nullptr) env.clock = Clock::Real();
  if (env.coordinator == nullptr) {
    WarnIfInsecure(options.tls, "trainer client");
    env.coordinator =
        NewGrpcCoordinatorClient(options.coordinator_address, options.rpc_timeout, options.tls);
  }
  v1::OpenJobRequest request;
  request.set_name(options.job_name);
  *request.mutable_spec() = options.spec;
  request.set_rank(options.rank);
  for (const std::string& token : options.resume_tokens) request.add_resume_tokens(token);
  absl::StatusOr<v1::OpenJobResponse> response;
  RETURN_IF_ERROR(RetryUnavailable(options.connect_backoff, env.clock, [&] {
    response = env.coordinator->OpenJob(request);
    return response.status();
  }));
  RETURN_IF_ERROR(CheckStart(options, *response));
  if (env.worker_streams == nullptr) {
    env.worker_streams =
        NewGrpcWorkerStreamFactory(response->batch_bytes(), options.spec.batch_size(), options.tls);
  }
  std::unique_ptr<LoaderImpl> impl(
      new LoaderImpl(std::move(options), std::move(env), *std::move(response)));
  RETURN_IF_ERROR(impl->Start());
  return impl;
}

LoaderImpl::LoaderImpl(LoaderOptions options, LoaderEnv env, v1::OpenJobResponse job)
    : options_(std::move(options)),
      env_(std::move(env)),
      job_(std::move(job)),
      pool_(std::make_shared<MessagePool>(/*max_free=*/4)),
      gather_buffers_(std::make_shared<BufferPool>(/*max_free=*/4)),
      buffer_(BufferConfig(options_, job_)),
      bad_samples_(options_.spec.has_max_bad_sample_fraction()
                       ? options_.spec.max_bad_sample_fraction()
                       : BadSampleBudget::kDefaultFraction,
                   job_.batches_per_epoch_per_rank() * options_.spec.batch_size(), options_.rank),
      consumption_(env_.clock->Now()),
      policy_(CreditPolicy::ForJob(options_.prefetch_bytes, job_.batch_bytes(),
                                   options_.balance_credit)) {
  if (options_.compression != "auto") {
    // Validated by LoaderOptions::Validate.
    absl::StatusOr<v1::CompressionChoice> choice =
        ParseCompressionChoice(options_.compression, "compression");
    if (choice.ok() && !IsRaw(choice->codec())) open_compression_ = *choice;
  }
}

LoaderImpl::~LoaderImpl() { Stop(); }

absl::Status LoaderImpl::Start() {
  // The first heartbeat is synchronous so that Open fails fast when the job can't be served, and
  // the streams start before Open returns.
  RETURN_IF_ERROR(
      RetryUnavailable(options_.connect_backoff, env_.clock, [this] { return HeartbeatOnce(); }));
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  return absl::OkStatus();
}

bool LoaderImpl::CanReturnLocked(std::optional<uint32_t> epoch) const {
  return stopping_ || !fatal_.ok() || buffer_.has_ready() || buffer_.done() ||
         (epoch.has_value() && buffer_.current_epoch() > *epoch);
}

absl::StatusOr<std::optional<Batch>> LoaderImpl::Next(std::optional<uint32_t> epoch) {
  const absl::Time entered = env_.clock->Now();
  absl::MutexLock lock(&mu_);
  if (last_return_.has_value()) {
    stats_.step_seconds += absl::ToDoubleSeconds(entered - *last_return_);
    consumption_.RecordStep(entered, entered - *last_return_);
  }
  TraceStepLocked();
  auto finish =
      [&](absl::StatusOr<std::optional<Batch>> result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        // Ends the stall and replenishes a handed-out batch's stream; inside Next's time.
        GrantCreditsLocked();
        const absl::Time now = env_.clock->Now();
        stats_.wait_seconds += absl::ToDoubleSeconds(now - entered);
        consumption_.RecordWait(now, now - entered, result.ok() && result->has_value());
        last_return_ = now;
        return result;
      };
  struct WaitArgs {
    const LoaderImpl* self;
    std::optional<uint32_t> epoch;
  };
  WaitArgs args{this, epoch};
  auto can_return = [](WaitArgs* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return a->self->CanReturnLocked(a->epoch);
  };
  while (true) {
    if (!fatal_.ok()) return finish(fatal_);
    if (stopping_) return finish(absl::CancelledError("loader stopped"));
    if (epoch.has_value() && !buffer_.done() && buffer_.current_epoch() > *epoch) {
      return finish(std::optional<Batch>());
    }
    StreamId source = 0;
    if (std::optional<Batch> batch = buffer_.Pop(&source)) {
      ++stats_.batches_delivered;
      policy_.OnHandedOut(source);
      if (const int64_t popped = TracePopped(batch->header().task()); popped != 0) {
        popped_traced_.emplace(batch->header().task(), popped);
      }
      return finish(std::move(batch));
    }
    if (buffer_.done()) return finish(std::optional<Batch>());
    ++waiters_;
    GrantCreditsLocked();  // starts the stall: may grant its extra credit
    mu_.Await(absl::Condition(+can_return, &args));
    --waiters_;
  }
}

void LoaderImpl::TraceStepLocked() {
  if (!last_traced_handout_.has_value()) return;
  const auto& [task, returned_ns] = *last_traced_handout_;
  trace_.Record(trace::Stage::kConsumerStep, task, returned_ns, trace_.Now(), "consumer");
  last_traced_handout_.reset();
}

int64_t LoaderImpl::TracePopped(const v1::TaskId& task) {
  if (!trace_.Sampled(task)) return 0;
  const int64_t popped = trace_.Now();
  if (std::optional<int64_t> accepted = trace_.TakeAccepted(task)) {
    trace_.Record(trace::Stage::kBufferWait, task, *accepted, popped, "consumer");
  }
  return popped;
}

void LoaderImpl::TraceHandedOut(const v1::TaskId& task) {
  absl::MutexLock lock(&mu_);
  if (!popped_traced_.has_value() || !SameTask(popped_traced_->first, task)) return;
  const int64_t now = trace_.Now();
  trace_.Record(trace::Stage::kHandoff, task, popped_traced_->second, now, "consumer");
  last_traced_handout_.emplace(task, now);
  popped_traced_.reset();
}

void LoaderImpl::TraceDeviceCopy(const v1::TaskId& task, int64_t start_ns, int64_t end_ns) {
  trace_.Record(trace::Stage::kH2D, task, start_ns, end_ns, "consumer");
  absl::MutexLock lock(&mu_);
  if (last_traced_handout_.has_value() && SameTask(last_traced_handout_->first, task)) {
    last_traced_handout_->second = std::max(last_traced_handout_->second, end_ns);
  }
}

void LoaderImpl::GrantCreditsLocked() {
  ConsumerView view;
  view.waiting = waiters_ > 0;
  view.ready = buffer_.has_ready() || buffer_.done();
  view.buffered = buffer_.buffered();
  for (const CreditGrant& grant : policy_.TakeCreditGrants(view, env_.clock->Now())) {
    auto it = streams_.find(grant.stream);
    if (it == streams_.end() || it->second.done || it->second.stream == nullptr) continue;
    it->second.stream->GrantCredit(grant.credits);
  }
  const uint64_t batch_bytes = job_.batch_bytes();
  stats_.budget_bytes =
      std::max<uint64_t>(options_.prefetch_bytes, batch_bytes * policy_.streams());
  stats_.max_committed_bytes =
      std::max(stats_.max_committed_bytes, policy_.committed(view.buffered) * batch_bytes);
  stats_.max_stall_extra = std::max(stats_.max_stall_extra, policy_.extra_credit());
}

void LoaderImpl::FailLocked(absl::Status status) {
  if (!fatal_.ok()) return;
  STOKER_LOG(ERROR) << "loader for job " << job_.job_id() << " rank " << options_.rank
                    << " failed: " << status;
  fatal_ = std::move(status);
}

uint32_t LoaderImpl::current_epoch() const {
  absl::MutexLock lock(&mu_);
  return buffer_.current_epoch();
}

std::string LoaderImpl::ResumeToken() const {
  RankPosition position;
  position.job_name = options_.job_name;
  position.world_size = options_.spec.world_size();
  position.rank = options_.rank;
  position.batches_per_rank = job_.batches_per_epoch_per_rank();
  {
    absl::MutexLock lock(&mu_);
    EpochBuffer::Progress progress = buffer_.progress();
    position.epoch = progress.epoch;
    position.prefix = progress.prefix;
    position.other = std::move(progress.other);
  }
  return EncodeResumeToken(job_.start(), position);
}

LoaderStats LoaderImpl::stats() const {
  absl::MutexLock lock(&mu_);
  LoaderStats stats = stats_;
  stats.failed = !fatal_.ok();
  stats.workers.clear();
  for (const auto& [worker_id, received] : worker_stats_) {
    WorkerReceiveStats worker = received;
    for (const auto& [id, state] : streams_) {
      if (!state.done && state.address == worker.address) worker.share = policy_.share(id);
    }
    stats.workers.push_back(worker);
  }
  return stats;
}

void LoaderImpl::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  bool report_received = false;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    report_received = !received_tasks_.empty() && heartbeat_failures_ == 0 && fatal_.ok();
  }
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();

  // Half-close every stream; the workers end them. Pointers stay valid: only ReapEndedStreams
  // erases streams, and no other thread calls it once the heartbeat thread has stopped.
  auto open_streams = [this] {
    std::vector<WorkerStream*> open;
    absl::MutexLock lock(&mu_);
    for (auto& [id, state] : streams_) {
      if (!state.done) open.push_back(state.stream.get());
    }
    return open;
  };
  for (WorkerStream* stream : open_streams()) stream->Close();
  auto all_done = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (const auto& [id, state] : streams_) {
      if (!state.done) return false;
    }
    return true;
  };
  {
    absl::MutexLock lock(&mu_);
    env_.clock->AwaitWithTimeout(&mu_, absl::Condition(&all_done), kCloseGrace);
  }
  for (WorkerStream* stream : open_streams()) stream->Cancel();
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&all_done));
  }
  ReapEndedStreams();
  // Best effort: report what was received since the last heartbeat. This report is what
  // completes those tasks on the coordinator; if it is lost, their leases expire and the job
  // stays unfinished there (it is retired as abandoned later).
  if (report_received) (void)HeartbeatOnce();
}

}  // namespace stoker
