// LoaderImpl: the heartbeat loop, reconciling worker streams with the coordinator's worker
// list, hedging reports, and the stream callbacks (loader_impl.h: threads and locking).

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/payload_codec.h"
#include "common/retry.h"
#include "trainer_client/loader_impl.h"

namespace stoker {
namespace {

// Codes after which retrying the heartbeat can't help: the loader fails.
bool IsPermanent(absl::StatusCode code) {
  using Code = absl::StatusCode;
  for (Code permanent : {Code::kNotFound, Code::kInvalidArgument, Code::kFailedPrecondition,
                         Code::kPermissionDenied, Code::kUnauthenticated, Code::kUnimplemented,
                         Code::kAlreadyExists, Code::kOutOfRange, Code::kDataLoss}) {
    if (code == permanent) return true;
  }
  return false;
}

}  // namespace

void LoaderImpl::HeartbeatLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (env_.clock->AwaitWithTimeout(&mu_, absl::Condition(&stopping_),
                                       options_.heartbeat_interval)) {
        return;
      }
    }
    ReapEndedStreams();
    const absl::Status status = HeartbeatOnce();
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      heartbeat_failures_ = 0;
    } else if (IsPermanent(status.code())) {
      FailLocked(status);
    } else {
      ++heartbeat_failures_;
      if (heartbeat_failures_ == 1 || heartbeat_failures_ % 50 == 0) {
        STOKER_LOG(WARNING) << "client heartbeat failed (" << heartbeat_failures_
                            << " in a row), retrying: " << status;
      }
    }
    GrantCreditsLocked();  // time-based stall escalation
  }
}

absl::Status LoaderImpl::HeartbeatOnce() {
  v1::ClientHeartbeatRequest request;
  request.set_job_id(job_.job_id());
  request.set_rank(options_.rank);
  request.set_client_id(options_.client_id);
  const int64_t clock = trace_.ClockIfOn();
  request.set_client_clock_ns(clock);
  trace_.FillHeartbeat(&request);  // lost if the call fails: a trace is best effort
  std::vector<v1::TaskId> reported;
  // Outside mu_: a sample (an NVML call) may take a while.
  const std::optional<double> gpu_utilization =
      env_.gpu_utilization != nullptr ? env_.gpu_utilization->Sample() : std::nullopt;
  {
    absl::MutexLock lock(&mu_);
    reported.swap(received_tasks_);
    if (gpu_utilization) consumption_.RecordGpuUtilization(env_.clock->Now(), *gpu_utilization);
    *request.mutable_stats() = consumption_.Snapshot(env_.clock->Now(), stats_.batches_delivered);
    AddOverdueLocked(&request);
  }
  // ClientHeartbeatRequest.consumed is the received report (the proto's historical name).
  *request.mutable_consumed() = {reported.begin(), reported.end()};
  absl::StatusOr<v1::ClientHeartbeatResponse> response = env_.coordinator->ClientHeartbeat(request);
  if (!response.ok()) {
    trace_.OnHeartbeatFailed();
    absl::MutexLock lock(&mu_);
    // Report them again next time, before what arrived meanwhile.
    reported.insert(reported.end(), received_tasks_.begin(), received_tasks_.end());
    received_tasks_.swap(reported);
    return response.status();
  }
  trace_.OnHeartbeatResponse(clock, *response);
  Reconcile(*response);
  return absl::OkStatus();
}

void LoaderImpl::AddOverdueLocked(v1::ClientHeartbeatRequest* request) {
  const std::optional<absl::Duration> stalled = policy_.stalled_for(env_.clock->Now());
  if (!stalled || *stalled < policy_.OverdueAfter() || waiters_ == 0 || buffer_.done()) return;
  for (uint64_t index : buffer_.MissingInCurrentEpoch(kMaxOverdueTasks)) {
    v1::TaskId* task = request->add_overdue();
    task->set_job_id(job_.job_id());
    task->set_epoch(buffer_.current_epoch());
    task->set_batch_index(index);
  }
  stats_.overdue_reported += static_cast<uint64_t>(request->overdue_size());
}

void LoaderImpl::Reconcile(const v1::ClientHeartbeatResponse& response) {
  std::set<std::string> targets;
  for (const v1::WorkerInfo& worker : response.workers()) {
    if (options_.only_workers.empty() ||
        std::find(options_.only_workers.begin(), options_.only_workers.end(), worker.address()) !=
            options_.only_workers.end()) {
      targets.insert(worker.address());
    }
  }
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  if (response.data_error() != data_error_) {
    data_error_ = response.data_error();
    if (data_error_.empty()) {
      STOKER_LOG(INFO) << "the coordinator reaches the job's dataset again";
    } else {
      STOKER_LOG(WARNING) << "coordinator: " << data_error_;
    }
  }
  const bool all_received = buffer_.accepted_total() >= buffer_.expected_total();
  if (response.state() == v1::JOB_STATE_FINISHED && !all_received) {
    FailLocked(absl::FailedPreconditionError(absl::StrCat(
        "job '", options_.job_name, "' (id ", job_.job_id(),
        ") is finished on the coordinator, but this client received only ",
        buffer_.accepted_total(), " of the ", buffer_.expected_total(), " batches of rank ",
        options_.rank, " (another client of this rank received them?); use a new job name")));
    return;
  }
  if (targets.empty() && !warned_no_workers_) {
    warned_no_workers_ = true;
    STOKER_LOG(WARNING) << "no live workers"
                        << (options_.only_workers.empty() ? "" : " matching only_workers")
                        << " for job " << job_.job_id() << " yet; waiting";
  }
  // Streams that stay open count towards the split too, even if the worker is no longer listed.
  std::set<std::string> addresses = targets;
  for (const auto& [id, state] : streams_) {
    if (!state.done) addresses.insert(state.address);
  }
  // Pooled headers and buffers: enough for every batch in flight.
  const size_t in_flight = policy_.effective_budget(addresses.size()) + addresses.size() + 2;
  pool_->set_max_free(in_flight);
  gather_buffers_->set_max_free(in_flight);
  policy_.Rebalance(env_.clock->Now());
  if (!all_received) {
    const absl::Time now = env_.clock->Now();
    for (const std::string& address : targets) {
      const AddressState& known = addresses_[address];
      if (known.open_stream == 0 && now >= known.next_attempt) OpenStreamLocked(address);
    }
  }
  GrantCreditsLocked();
}

void LoaderImpl::OpenStreamLocked(const std::string& address) {
  const StreamId id = next_stream_id_++;
  addresses_[address].open_stream = id;
  StreamState& state = streams_[id];
  state.address = address;
  const uint32_t share = policy_.AddStream(id, env_.clock->Now());
  stats_.max_streams = std::max(stats_.max_streams, policy_.streams());
  v1::OpenStream open;
  open.set_job_id(job_.job_id());
  open.set_rank(options_.rank);
  open.set_client_id(options_.client_id);
  if (open_compression_.has_value()) *open.mutable_compression() = *open_compression_;
  if (options_.compression == "auto") state.auto_compression = std::make_unique<AutoCompression>();
  WorkerStreamHooks hooks;
  hooks.allocate = [pool = pool_] { return pool->Acquire(); };
  hooks.gather_buffers = gather_buffers_;
  hooks.on_batch = [this, id, address](Batch batch) { OnBatch(id, address, std::move(batch)); };
  hooks.on_done = [this, id](const absl::Status& status) { OnStreamDone(id, status); };
  hooks.credit_clock = [this] { return trace_.ClockIfOn(); };
  // The factory never calls a hook before returning, so holding mu_ here is safe.
  state.stream = env_.worker_streams->Open(address, open, std::move(hooks));
  ++stats_.streams_opened;
  STOKER_LOG(DEBUG) << "streaming job " << job_.job_id() << " rank " << options_.rank
                    << " from worker " << address << " (credit " << share << ")";
}

void LoaderImpl::FailStreamLocked(StreamId id, const absl::Status& status) {
  ++stats_.corrupt_payloads;
  auto it = streams_.find(id);
  if (it == streams_.end() || !it->second.failure.ok()) return;
  it->second.failure = status;
  // `status` names the worker (DecodeReceivedBatch).
  STOKER_LOG(WARNING) << "ending a stream; its unacknowledged batches will be fetched again: "
                      << status;
}

void LoaderImpl::ObserveCompressionLocked(StreamState* state, const DecodedBatch& decoded) {
  std::optional<v1::CompressionChoice> ask =
      state->auto_compression->OnBatch(BatchObservation::Of(decoded, env_.clock->Now()));
  if (ask.has_value() && !state->done) {
    STOKER_LOG(DEBUG) << "auto compression: asking worker " << state->address << " for "
                      << CompressionChoiceName(*ask);
    state->stream->SetCompression(*ask);
  }
}

void LoaderImpl::OnBatch(StreamId id, const std::string& address, Batch received) {
  const absl::Time received_at = env_.clock->Now();  // the receive path's busy time starts
  // Batch timelines: the arrival of a traced batch (worker spans) or a sampled one (its own).
  const bool sampled = trace_.Sampled(received.header().task());
  const bool worker_spans = received.header().has_trace() && trace_.on();
  const int64_t arrived = sampled || worker_spans ? trace_.Now() : 0;
  if (worker_spans) trace_.OnWorkerSpans(received.header(), arrived);
  absl::StatusOr<DecodedBatch> decoded = DecodeReceivedBatch(
      received.parts(), address,
      job_.batch_bytes() > 0 ? job_.batch_bytes() : std::numeric_limits<int>::max(), pool_.get(),
      gather_buffers_.get());
  if (!decoded.ok()) {
    absl::MutexLock lock(&mu_);
    FailStreamLocked(id, decoded.status());
    return;
  }
  if (sampled) {
    trace_.Record(
        IsRaw(received.header().compression()) ? trace::Stage::kReceive : trace::Stage::kDecompress,
        received.header().task(), arrived, trace_.Now(), "stream reader");
  }
  Batch batch(decoded->batch);  // moves into the buffer below; `decoded` keeps `header` alive.
  const v1::BatchHeader& header = batch.header();
  v1::TaskId task = header.task();
  const uint64_t worker_id = batch.worker_id();
  const uint64_t samples = batch.num_samples();
  const uint64_t bytes = batch.size_bytes();
  const double produce_seconds = batch.produce_seconds();
  absl::MutexLock lock(&mu_);
  auto stream_it = streams_.find(id);
  StreamState* state = stream_it == streams_.end() ? nullptr : &stream_it->second;
  if (state != nullptr && !state->failure.ok()) return;  // ending: handed back, fetched again
  stats_.decode_seconds += decoded->decode_seconds;
  if (state != nullptr && state->auto_compression != nullptr) {
    ObserveCompressionLocked(state, *decoded);
  }
  policy_.OnBatch(id, env_.clock->Now());
  switch (buffer_.Add(id, std::move(batch))) {
    case EpochBuffer::AddResult::kAccepted: {
      if (sampled) trace_.OnAccepted(task, trace_.Now());
      policy_.OnBuffered(id);
      if (absl::Status budget = bad_samples_.Add(header); !budget.ok()) FailLocked(budget);
      ++stats_.batches_received;
      stats_.samples_received += samples;
      stats_.bytes_received += bytes;
      WorkerReceiveStats& worker = worker_stats_[worker_id];
      worker.worker_id = worker_id;
      if (state != nullptr) worker.address = state->address;
      ++worker.batches;
      worker.samples += samples;
      worker.bytes += bytes;
      worker.wire_bytes += decoded->wire_bytes;
      const absl::Time now = env_.clock->Now();
      consumption_.RecordReceived(now, decoded->wire_bytes, now - received_at);
      worker.produce_seconds += produce_seconds;
      if (state != nullptr) addresses_[state->address].failures = 0;
      received_tasks_.push_back(task);
      if (state != nullptr && !state->done) state->stream->Ack(task);
      break;
    }
    case EpochBuffer::AddResult::kDuplicate:
      ++stats_.duplicates_dropped;
      if (state != nullptr && !state->done) state->stream->Ack(task);
      break;
    case EpochBuffer::AddResult::kInvalid:
      if (++stats_.invalid_dropped <= 10) {
        STOKER_LOG(WARNING) << "dropped a batch that is not a task of job " << job_.job_id()
                            << " rank " << options_.rank << ": " << task.ShortDebugString()
                            << " from worker " << worker_id;
      }
      break;
  }
  GrantCreditsLocked();
}

void LoaderImpl::OnStreamDone(StreamId id, const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  it->second.done = true;
  policy_.RemoveStream(id);
  AddressState& address = addresses_[it->second.address];
  if (address.open_stream == id) address.open_stream = 0;
  if (stopping_) return;
  if (buffer_.accepted_total() >= buffer_.expected_total()) {
    STOKER_LOG(DEBUG) << "stream from worker " << it->second.address
                      << " ended after the last batch: " << status;
    return;
  }
  ++stats_.stream_failures;
  ++address.failures;
  const absl::Duration delay =
      BackoffDelay(options_.connect_backoff, address.failures, absl::Uniform(jitter_, 0.0, 1.0));
  address.next_attempt = env_.clock->Now() + delay;
  // Warn once per run of failures: a dead worker stays listed until the coordinator notices.
  if (address.failures == 1 || address.failures % 20 == 0) {
    STOKER_LOG(WARNING) << "stream from worker " << it->second.address << " ended ("
                        << (status.ok() ? "worker closed it" : status.ToString())
                        << "); reconnecting while the coordinator lists it (failure "
                        << address.failures << ")";
  } else {
    STOKER_LOG(DEBUG) << "reconnect to worker " << it->second.address << " failed: " << status;
  }
}

void LoaderImpl::ReapEndedStreams() {
  std::vector<std::unique_ptr<WorkerStream>> ended;
  std::vector<WorkerStream*> failed;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = streams_.begin(); it != streams_.end();) {
      if (!it->second.done && !it->second.failure.ok() && it->second.stream != nullptr) {
        failed.push_back(it->second.stream.get());
      }
      if (it->second.done) {
        ended.push_back(std::move(it->second.stream));
        it = streams_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Only this thread erases streams, so the pointers stay valid; Cancel may run on_done inline.
  for (WorkerStream* stream : failed) stream->Cancel();
  for (auto& stream : ended) {
    if (stream != nullptr) stream->Join();
  }
}

}  // namespace stoker
