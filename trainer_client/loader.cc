#include "trainer_client/loader.h"

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

absl::StatusOr<std::unique_ptr<Loader>> Loader::Open(LoaderOptions options, LoaderEnv env) {
  ASSIGN_OR_RETURN(std::unique_ptr<LoaderImpl> impl,
                   LoaderImpl::Open(std::move(options), std::move(env)));
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

Loader::Loader(std::unique_ptr<LoaderImpl> impl)
    : impl_(std::move(impl)),
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
    return absl::OutOfRangeError(absl::StrCat(
        "end of data: all ", epochs(), " epochs of job ", job_id(), " (rank ",
        impl_->options().rank, ") were delivered"));
  }
  return *std::move(batch);
}

absl::StatusOr<std::optional<Batch>> Loader::NextInEpoch(uint32_t epoch) {
  return impl_->Next(epoch);
}

EpochRange Loader::Epoch() { return EpochRange(this, current_epoch()); }

std::string Loader::ResumeToken() const { return impl_->ResumeToken(); }

uint32_t Loader::current_epoch() const { return impl_->current_epoch(); }

uint64_t Loader::batches_per_epoch() const { return impl_->job().batches_per_epoch_per_rank(); }

uint32_t Loader::epochs() const { return impl_->options().spec.epochs(); }

absl::Span<const int64_t> Loader::batch_shape() const {
  const auto& shape = impl_->job().batch_shape();
  return absl::Span<const int64_t>(shape.data(), shape.size());
}

uint64_t Loader::batch_bytes() const { return impl_->job().batch_bytes(); }

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
