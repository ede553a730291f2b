#include "trainer_client/stream_side.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "common/logging.h"
#include "common/payload_codec.h"
#include "common/retry.h"

namespace stoker {

StreamSide::StreamSide(const LoaderOptions& options, const v1::OpenJobResponse& job, Clock* clock,
                       WorkerStreamFactory* factory, ClientTrace* trace, Callbacks callbacks)
    : options_(options),
      job_(job),
      clock_(clock),
      factory_(factory),
      trace_(trace),
      callbacks_(std::move(callbacks)),
      pool_(std::make_shared<MessagePool>(/*max_free=*/4)),
      gather_buffers_(std::make_shared<BufferPool>(/*max_free=*/4)),
      policy_(
          CreditPolicy::ForJob(options.prefetch_bytes, job.batch_bytes(), options.balance_credit)) {
  if (options_.compression != "auto") {
    // Validated by LoaderOptions::Validate.
    absl::StatusOr<v1::CompressionChoice> choice =
        ParseCompressionChoice(options_.compression, "compression");
    if (choice.ok() && !IsRaw(choice->codec())) open_compression_ = *choice;
  }
}

void StreamSide::Reconcile(const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers,
                           bool open_new) {
  const std::vector<std::string>& only = options_.only_workers;
  std::set<std::string> targets;
  for (const v1::WorkerInfo& worker : workers) {
    if (only.empty() || std::find(only.begin(), only.end(), worker.address()) != only.end()) {
      targets.insert(worker.address());
    }
  }
  if (targets.empty() && !warned_no_workers_) {
    warned_no_workers_ = true;
    STOKER_LOG(WARNING) << "no live workers" << (only.empty() ? "" : " matching only_workers")
                        << " for job " << job_.job_id() << " yet; waiting";
  }
  // Streams that stay open count towards the split too, even if the worker is no longer listed.
  std::set<std::string> addresses = targets;
  for (const auto& [id, stream] : streams_) {
    if (!stream.done) addresses.insert(stream.address);
  }
  // Pooled headers and buffers: enough for every batch in flight.
  const size_t in_flight = policy_.effective_budget(addresses.size()) + addresses.size() + 2;
  pool_->set_max_free(in_flight);
  gather_buffers_->set_max_free(in_flight);
  policy_.Rebalance(clock_->Now());
  if (!open_new) return;
  const absl::Time now = clock_->Now();
  for (const std::string& address : targets) {
    const Address& known = addresses_[address];
    if (known.open_stream == 0 && now >= known.next_attempt) Open(address);
  }
}

void StreamSide::Open(const std::string& address) {
  const StreamId id = next_stream_id_++;
  addresses_[address].open_stream = id;
  Stream& stream = streams_[id];
  stream.address = address;
  const uint32_t share = policy_.AddStream(id, clock_->Now());
  stats_.max_streams = std::max(stats_.max_streams, policy_.streams());
  v1::OpenStream open;
  open.set_job_id(job_.job_id());
  open.set_rank(options_.rank);
  open.set_client_id(options_.client_id);
  if (open_compression_.has_value()) *open.mutable_compression() = *open_compression_;
  if (options_.compression == "auto") stream.auto_compression = std::make_unique<AutoCompression>();
  WorkerStreamHooks hooks;
  hooks.allocate = [pool = pool_] { return pool->Acquire(); };
  hooks.gather_buffers = gather_buffers_;
  hooks.on_batch = [this, id, address](Batch batch) { Receive(id, address, std::move(batch)); };
  hooks.on_done = [this, id](const absl::Status& status) { callbacks_.on_done(id, status); };
  hooks.credit_clock = [this] { return trace_->ClockIfOn(); };
  // The factory never calls a hook before returning, so holding the Loader's mutex is safe.
  stream.stream = factory_->Open(address, open, std::move(hooks));
  ++stats_.streams_opened;
  STOKER_LOG(DEBUG) << "streaming job " << job_.job_id() << " rank " << options_.rank
                    << " from worker " << address << " (credit " << share << ")";
}

void StreamSide::Receive(StreamId id, const std::string& address, Batch received) const {
  StreamDelivery delivery;
  delivery.stream = id;
  delivery.received_at = clock_->Now();  // the receive path's busy time starts
  // Batch timelines: the arrival of a traced batch (worker spans) or a sampled one (its own).
  delivery.sampled = trace_->Sampled(received.header().task());
  const bool worker_spans = received.header().has_trace() && trace_->on();
  const int64_t arrived = delivery.sampled || worker_spans ? trace_->Now() : 0;
  if (worker_spans) trace_->OnWorkerSpans(received.header(), arrived);
  const uint64_t max_raw_bytes = job_.batch_bytes() > 0 ? options_.MaxBatchPayloadBytes(job_)
                                                        : std::numeric_limits<int>::max();
  delivery.decoded = DecodeReceivedBatch(received.parts(), address, max_raw_bytes, pool_.get(),
                                         gather_buffers_.get());
  if (delivery.decoded.ok() && delivery.sampled) {
    trace_->Record(
        IsRaw(received.header().compression()) ? trace::Stage::kReceive : trace::Stage::kDecompress,
        received.header().task(), arrived, trace_->Now(), "stream reader");
  }
  callbacks_.on_batch(std::move(delivery));
}

StreamSide::Stream* StreamSide::Find(StreamId id) {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : &it->second;
}

void StreamSide::Fail(StreamId id, const absl::Status& status) {
  ++stats_.corrupt_payloads;
  Stream* stream = Find(id);
  if (stream == nullptr || !stream->failure.ok()) return;
  stream->failure = status;
  // `status` names the worker (DecodeReceivedBatch).
  STOKER_LOG(WARNING) << "ending a stream; its unacknowledged batches will be fetched again: "
                      << status;
}

bool StreamSide::OnBatch(StreamId id, const DecodedBatch& decoded) {
  Stream* stream = Find(id);
  if (stream != nullptr && !stream->failure.ok()) return false;
  stats_.decode_seconds += decoded.decode_seconds;
  if (stream != nullptr && stream->auto_compression != nullptr) {
    std::optional<v1::CompressionChoice> ask =
        stream->auto_compression->OnBatch(BatchObservation::Of(decoded, clock_->Now()));
    if (ask.has_value() && !stream->done) {
      STOKER_LOG(DEBUG) << "auto compression: asking worker " << stream->address << " for "
                        << CompressionChoiceName(*ask);
      stream->stream->SetCompression(*ask);
    }
  }
  policy_.OnBatch(id, clock_->Now());
  return true;
}

void StreamSide::OnAccepted(StreamId id, const Batch& batch, uint64_t wire_bytes) {
  policy_.OnBuffered(id);
  Stream* stream = Find(id);
  WorkerReceiveStats& worker = workers_[batch.worker_id()];
  worker.worker_id = batch.worker_id();
  if (stream != nullptr) worker.address = stream->address;
  ++worker.batches;
  worker.samples += batch.num_samples();
  worker.bytes += batch.size_bytes();
  worker.wire_bytes += wire_bytes;
  worker.produce_seconds += batch.produce_seconds();
  if (stream == nullptr) return;
  addresses_[stream->address].failures = 0;
  if (!stream->done) stream->stream->Ack(batch.header().task());
}

void StreamSide::OnDuplicate(StreamId id, const v1::TaskId& task) {
  Stream* stream = Find(id);
  if (stream != nullptr && !stream->done) stream->stream->Ack(task);
}

void StreamSide::GrantCredits(const ConsumerView& consumer) {
  for (const CreditGrant& grant : policy_.TakeCreditGrants(consumer, clock_->Now())) {
    Stream* stream = Find(grant.stream);
    if (stream == nullptr || stream->done || stream->stream == nullptr) continue;
    stream->stream->GrantCredit(grant.credits);
  }
  const uint64_t batch_bytes = job_.batch_bytes();
  stats_.budget_bytes =
      std::max<uint64_t>(options_.prefetch_bytes, batch_bytes * policy_.streams());
  stats_.max_committed_bytes =
      std::max(stats_.max_committed_bytes, policy_.committed(consumer.buffered) * batch_bytes);
  stats_.max_stall_extra = std::max(stats_.max_stall_extra, policy_.extra_credit());
}

void StreamSide::OnDone(StreamId id, const absl::Status& status, bool stopping, bool all_received) {
  Stream* stream = Find(id);
  if (stream == nullptr) return;
  stream->done = true;
  policy_.RemoveStream(id);
  Address& address = addresses_[stream->address];
  if (address.open_stream == id) address.open_stream = 0;
  if (stopping) return;
  if (all_received) {
    STOKER_LOG(DEBUG) << "stream from worker " << stream->address
                      << " ended after the last batch: " << status;
    return;
  }
  ++stats_.stream_failures;
  ++address.failures;
  const absl::Duration delay =
      BackoffDelay(options_.connect_backoff, address.failures, absl::Uniform(jitter_, 0.0, 1.0));
  address.next_attempt = clock_->Now() + delay;
  // Warn once per run of failures: a dead worker stays listed until the coordinator notices.
  if (address.failures == 1 || address.failures % 20 == 0) {
    STOKER_LOG(WARNING) << "stream from worker " << stream->address << " ended ("
                        << (status.ok() ? "worker closed it" : status.ToString())
                        << "); reconnecting while the coordinator lists it (failure "
                        << address.failures << ")";
  } else {
    STOKER_LOG(DEBUG) << "reconnect to worker " << stream->address << " failed: " << status;
  }
}

bool StreamSide::Overdue(absl::Time now) const {
  const std::optional<absl::Duration> stalled = policy_.stalled_for(now);
  return stalled.has_value() && *stalled >= policy_.OverdueAfter();
}

StreamSide::Ended StreamSide::TakeEnded() {
  Ended taken;
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& stream = it->second;
    if (!stream.done && !stream.failure.ok() && stream.stream != nullptr) {
      taken.failing.push_back(stream.stream.get());
    }
    if (stream.done) {
      taken.ended.push_back(std::move(stream.stream));
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

void StreamSide::Ended::CancelAndJoin() {
  for (WorkerStream* stream : failing) stream->Cancel();
  for (auto& stream : ended) {
    if (stream != nullptr) stream->Join();
  }
}

std::vector<WorkerStream*> StreamSide::OpenStreams() const {
  std::vector<WorkerStream*> open;
  for (const auto& [id, stream] : streams_) {
    if (!stream.done) open.push_back(stream.stream.get());
  }
  return open;
}

bool StreamSide::all_done() const {
  return std::all_of(streams_.begin(), streams_.end(),
                     [](const auto& entry) { return entry.second.done; });
}

void StreamSide::AddStats(LoaderStats* stats) const {
  stats->streams_opened = stats_.streams_opened;
  stats->stream_failures = stats_.stream_failures;
  stats->corrupt_payloads = stats_.corrupt_payloads;
  stats->decode_seconds = stats_.decode_seconds;
  stats->budget_bytes = stats_.budget_bytes;
  stats->max_committed_bytes = stats_.max_committed_bytes;
  stats->max_stall_extra = stats_.max_stall_extra;
  stats->max_streams = stats_.max_streams;
  stats->workers.clear();
  for (const auto& [worker_id, received] : workers_) {
    WorkerReceiveStats worker = received;
    for (const auto& [id, stream] : streams_) {
      if (!stream.done && stream.address == worker.address) worker.share = policy_.share(id);
    }
    stats->workers.push_back(worker);
  }
}

}  // namespace stoker
