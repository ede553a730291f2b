// LoaderImpl: opening, consuming, stopping, statistics. Heartbeats and the stream callbacks are
// in loader_heartbeat.cc.

#include "trainer_client/loader_impl.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/heap_tuning.h"
#include "common/logging.h"
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
    env.worker_streams = NewGrpcWorkerStreamFactory(options.MaxBatchPayloadBytes(*response),
                                                    options.spec.batch_size(), options.tls);
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
      consumer_(options_, job_, env_.clock->Now()),
      streams_(options_, job_, env_.clock, env_.worker_streams.get(), &trace_,
               {.on_batch = [this](StreamDelivery delivery) { OnBatch(std::move(delivery)); },
                .on_done = [this](StreamId id,
                                  const absl::Status& status) { OnStreamDone(id, status); }}) {}

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
  return stopping_ || !fatal_.ok() || consumer_.CanReturn(epoch);
}

absl::StatusOr<std::optional<Batch>> LoaderImpl::Next(std::optional<uint32_t> epoch) {
  const absl::Time entered = env_.clock->Now();
  trace_.OnNextCalled();
  absl::MutexLock lock(&mu_);
  consumer_.OnNextEntered(entered);
  auto finish =
      [&](absl::StatusOr<std::optional<Batch>> result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        // Ends the stall and replenishes a handed-out batch's stream; inside Next's time.
        GrantCreditsLocked();
        consumer_.OnNextReturned(entered, env_.clock->Now(), result.ok() && result->has_value());
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
    if (consumer_.EpochOver(epoch)) return finish(std::optional<Batch>());
    StreamId source = 0;
    if (std::optional<Batch> batch = consumer_.Pop(&source)) {
      streams_.OnHandedOut(source);
      trace_.OnPopped(batch->header().task());
      return finish(std::move(batch));
    }
    if (consumer_.buffer().done()) return finish(std::optional<Batch>());
    consumer_.BeginWait();
    GrantCreditsLocked();  // starts the stall: may grant its extra credit
    mu_.Await(absl::Condition(+can_return, &args));
    consumer_.EndWait();
  }
}

void LoaderImpl::GrantCreditsLocked() { streams_.GrantCredits(consumer_.view()); }

void LoaderImpl::FailLocked(absl::Status status) {
  if (!fatal_.ok()) return;
  STOKER_LOG(ERROR) << "loader for job " << job_.job_id() << " rank " << options_.rank
                    << " failed: " << status;
  fatal_ = std::move(status);
}

uint32_t LoaderImpl::current_epoch() const {
  absl::MutexLock lock(&mu_);
  return consumer_.buffer().current_epoch();
}

std::string LoaderImpl::ResumeToken() const {
  RankPosition position;
  position.job_name = options_.job_name;
  position.world_size = options_.spec.world_size();
  position.rank = options_.rank;
  position.batches_per_rank = job_.batches_per_epoch_per_rank();
  {
    absl::MutexLock lock(&mu_);
    EpochBuffer::Progress progress = consumer_.buffer().progress();
    position.epoch = progress.epoch;
    position.prefix = progress.prefix;
    position.other = std::move(progress.other);
  }
  return EncodeResumeToken(job_.start(), position);
}

LoaderStats LoaderImpl::stats() const {
  absl::MutexLock lock(&mu_);
  LoaderStats stats = consumer_.stats();
  streams_.AddStats(&stats);
  stats.failed = !fatal_.ok();
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
    report_received = consumer_.has_received_report() && heartbeat_failures_ == 0 && fatal_.ok();
  }
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();

  // Half-close every stream; the workers end them. Pointers stay valid: only ReapEndedStreams
  // erases streams, and no other thread calls it once the heartbeat thread has stopped.
  auto open_streams = [this] {
    absl::MutexLock lock(&mu_);
    return streams_.OpenStreams();
  };
  for (WorkerStream* stream : open_streams()) stream->Close();
  auto all_done = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return streams_.all_done(); };
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
