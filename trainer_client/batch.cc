#include "trainer_client/batch.h"

#include <utility>

#include "stoker/v1/worker.pb.h"

namespace stoker {

Batch::Batch(std::shared_ptr<const v1::BatchMessage> message) : message_(std::move(message)) {}

const v1::BatchMessage& Batch::message() const {
  return message_ != nullptr ? *message_ : v1::BatchMessage::default_instance();
}

const void* Batch::data() const { return message().data().data(); }

size_t Batch::size_bytes() const { return message().data().size(); }

absl::Span<const uint8_t> Batch::bytes() const {
  const std::string& data = message().data();
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
}

absl::Span<const int64_t> Batch::shape() const {
  const auto& field = message().header().shape();
  return absl::Span<const int64_t>(field.data(), field.size());
}

v1::DType Batch::dtype() const { return message().header().dtype(); }

v1::Layout Batch::layout() const { return message().header().layout(); }

absl::Span<const int64_t> Batch::labels() const {
  const auto& field = message().header().labels();
  return absl::Span<const int64_t>(field.data(), field.size());
}

absl::Span<const uint64_t> Batch::sample_indices() const {
  const auto& field = message().header().sample_indices();
  return absl::Span<const uint64_t>(field.data(), field.size());
}

absl::Span<const float> Batch::soft_labels() const {
  const auto& field = message().header().soft_labels();
  return absl::Span<const float>(field.data(), field.size());
}

size_t Batch::num_classes() const {
  return num_samples() == 0 ? 0 : soft_labels().size() / num_samples();
}

uint64_t Batch::job_id() const { return message().header().task().job_id(); }

uint32_t Batch::epoch() const { return message().header().task().epoch(); }

uint64_t Batch::batch_index() const { return message().header().task().batch_index(); }

uint64_t Batch::worker_id() const { return message().header().worker_id(); }

double Batch::produce_seconds() const { return message().header().produce_seconds(); }

}  // namespace stoker
