#include "trainer_client/loader.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/loader_impl.h"
#include "trainer_client/loader_metrics.h"

namespace stoker {

absl::StatusOr<std::unique_ptr<Loader>> Loader::Open(LoaderOptions options) {
  return Open(std::move(options), LoaderEnv());
}

namespace {

// Sets the placement this client asks the coordinator for (JobSpec.tail, which decides it): an
// unset placement is AUTO where this program can run a tail (`can_run_tail`), else WORKER.
absl::Status AskTailPlacement(bool can_run_tail, v1::JobSpec& spec) {
  if (spec.tail() == v1::TAIL_PLACEMENT_UNSPECIFIED && can_run_tail) {
    spec.set_tail(v1::TAIL_PLACEMENT_AUTO);
  }
  if (can_run_tail) return absl::OkStatus();
  if (spec.tail() == v1::TAIL_PLACEMENT_CLIENT) {
    return absl::FailedPreconditionError(
        "tail: \"client\" asked, but this program opened the Loader without a tail implementation; "
        "pass "
        "LoaderEnv::tail = ClientTailFactory() (trainer_client/client_tail.h, library "
        "stoker_client_tail)");
  }
  if (spec.tail() == v1::TAIL_PLACEMENT_AUTO) spec.set_tail(v1::TAIL_PLACEMENT_WORKER);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Loader>> Loader::Open(LoaderOptions options, LoaderEnv env) {
  const BatchTailFactory tail_factory = env.tail;
  RETURN_IF_ERROR(AskTailPlacement(tail_factory != nullptr, options.spec));
  ASSIGN_OR_RETURN(std::unique_ptr<LoaderImpl> impl,
                   LoaderImpl::Open(std::move(options), std::move(env)));
  std::unique_ptr<BatchTail> tail;
  if (impl->job().has_client_tail()) {
    // The coordinator placed the tail here (the only placement an older one gives is WORKER).
    if (!tail_factory) {
      impl->Stop();
      return absl::FailedPreconditionError(
          "tail: the job runs its tail on the client, and this program has no tail "
          "implementation (LoaderEnv::tail)");
    }
    const auto& shape = impl->job().batch_shape();
    absl::StatusOr<std::unique_ptr<BatchTail>> created = tail_factory(
        impl->job().client_tail(), absl::Span<const int64_t>(shape.data(), shape.size()));
    if (!created.ok()) {
      impl->Stop();
      return created.status();
    }
    tail = *std::move(created);
  }
  return std::unique_ptr<Loader>(new Loader(std::move(impl), std::move(tail)));
}

Loader::Loader(std::unique_ptr<LoaderImpl> impl, std::unique_ptr<BatchTail> tail)
    : impl_(std::move(impl)),
      tail_(std::move(tail)),
      metrics_(std::make_shared<LoaderMetrics>(impl_.get(), impl_->options().job_name,
                                               impl_->options().rank)) {}

Loader::~Loader() {
  metrics_->Detach();  // A host may still hold the collectable.
  Stop();
}

std::shared_ptr<prometheus::Collectable> Loader::metrics() const { return metrics_; }

absl::StatusOr<Batch> Loader::Next() {
  ASSIGN_OR_RETURN(std::optional<Batch> batch, impl_->Next(std::nullopt));
  if (!batch.has_value()) {
    return absl::OutOfRangeError(absl::StrCat("end of data: all ", epochs(), " epochs of job ",
                                              job_id(), " (rank ", impl_->options().rank,
                                              ") were delivered"));
  }
  return Finish(*std::move(batch));
}

absl::StatusOr<std::optional<Batch>> Loader::NextInEpoch(uint32_t epoch) {
  ASSIGN_OR_RETURN(std::optional<Batch> batch, impl_->Next(epoch));
  if (!batch.has_value()) return batch;
  return Finish(*std::move(batch));
}

absl::StatusOr<Batch> Loader::Finish(Batch batch) {
  const bool traced = impl_->trace().Sampled(batch.header().task());
  absl::StatusOr<Batch> finished =
      tail_ == nullptr ? absl::StatusOr<Batch>(std::move(batch)) : tail_->Apply(batch);
  if (traced && finished.ok()) impl_->trace().OnHandedOut(finished->header().task());
  return finished;
}

bool Loader::Traced(const Batch& batch) const {
  return impl_->trace().Sampled(batch.header().task());
}

int64_t Loader::TraceClockNanos() const { return impl_->trace().Now(); }

void Loader::RecordDeviceCopy(const Batch& batch, int64_t start_ns, int64_t end_ns) {
  impl_->trace().OnDeviceCopy(batch.header().task(), start_ns, end_ns);
}

EpochRange Loader::Epoch() { return EpochRange(this, current_epoch()); }

std::string Loader::ResumeToken() const { return impl_->ResumeToken(); }

uint32_t Loader::current_epoch() const { return impl_->current_epoch(); }

uint64_t Loader::batches_per_epoch() const { return impl_->job().batches_per_epoch_per_rank(); }

uint32_t Loader::epochs() const { return impl_->options().spec.epochs(); }

absl::Span<const int64_t> Loader::batch_shape() const {
  if (tail_ != nullptr) return tail_->batch_shape();
  const auto& shape = impl_->job().batch_shape();
  return absl::Span<const int64_t>(shape.data(), shape.size());
}

uint64_t Loader::batch_bytes() const {
  return tail_ != nullptr ? tail_->batch_bytes() : impl_->job().batch_bytes();
}

uint64_t Loader::job_id() const { return impl_->job().job_id(); }

const std::string& Loader::client_id() const { return impl_->options().client_id; }

LoaderStats Loader::stats() const { return impl_->stats(); }

void Loader::Stop() { impl_->Stop(); }

EpochRange::Iterator EpochRange::begin() {
  if (!started_) {
    started_ = true;
    Advance();
  }
  return Iterator(this);
}

void EpochRange::Advance() {
  if (finished_) return;
  absl::StatusOr<std::optional<Batch>> next = loader_->NextInEpoch(epoch_);
  if (!next.ok()) {
    status_ = next.status();
    finished_ = true;
  } else if (!next->has_value()) {
    finished_ = true;
  }
  current_ = finished_ ? Batch() : **std::move(next);
}

}  // namespace stoker
