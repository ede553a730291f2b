#include "trainer_client/batch.h"

#include <cstring>
#include <utility>

#include "common/target_fields.h"
#include "stoker/v1/worker.pb.h"
#include "wire/batch_check.h"

namespace stoker {

namespace {

// `bytes` as little-endian values of T (this client's byte order), copied: they may be unaligned.
template <typename T>
std::vector<T> CopyValues(absl::Span<const uint8_t> bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

const BatchPayload& EmptyPayload() {
  static const BatchPayload* const empty = new BatchPayload(BatchPayload::Chunk(), nullptr);
  return *empty;
}

}  // namespace

Batch::Batch(std::shared_ptr<const v1::BatchMessage> message)
    : Batch(ReceivedBatch::FromMessage(std::move(message))) {}

Batch::Batch(ReceivedBatch received)
    : message_(std::move(received.header)), payload_(std::move(received.payload)) {}

const v1::BatchHeader& Batch::header() const {
  return message_ != nullptr ? message_->header() : v1::BatchHeader::default_instance();
}

const BatchPayload& Batch::payload() const {
  return payload_ != nullptr ? *payload_ : EmptyPayload();
}

const void* Batch::data() const { return payload().contiguous().data(); }

size_t Batch::size_bytes() const { return TensorBytes(header(), payload().size()); }

absl::Span<const uint8_t> Batch::bytes() const {
  return payload().contiguous().first(size_bytes());
}

const std::string& Batch::field_name(size_t column) const {
  return header().fields(static_cast<int>(column)).name();
}

int Batch::FindField(absl::string_view name) const {
  for (int c = 0; c < header().fields_size(); ++c) {
    if (header().fields(c).name() == name) return c;
  }
  return -1;
}

absl::Span<const uint8_t> Batch::field_value(size_t column, size_t i) const {
  const auto& offsets = header().fields(static_cast<int>(column)).offsets();
  const uint64_t begin = offsets.Get(static_cast<int>(i));
  return payload().contiguous().subspan(begin, offsets.Get(static_cast<int>(i + 1)) - begin);
}

absl::Span<const uint8_t> Batch::TargetBytes(absl::string_view field, size_t i) const {
  const int column = FindField(field);
  return column < 0 ? absl::Span<const uint8_t>() : field_value(static_cast<size_t>(column), i);
}

std::vector<float> Batch::boxes(size_t i) const {
  return CopyValues<float>(TargetBytes(kBoxesField, i));
}

std::vector<int64_t> Batch::box_labels(size_t i) const {
  return CopyValues<int64_t>(TargetBytes(kBoxLabelsField, i));
}

absl::Span<const uint8_t> Batch::masks(size_t i) const { return TargetBytes(kMasksField, i); }

absl::Span<const uint8_t> Batch::semantic_mask(size_t i) const {
  return TargetBytes(kSemanticMaskField, i);
}

std::vector<float> Batch::keypoints(size_t i, uint32_t* per_instance) const {
  const absl::Span<const uint8_t> value = TargetBytes(kKeypointsField, i);
  *per_instance = 0;
  if (value.size() < kWireKeypointsPrefixBytes) return {};
  std::memcpy(per_instance, value.data(), sizeof(*per_instance));
  return CopyValues<float>(value.subspan(kWireKeypointsPrefixBytes));
}

absl::Span<const int64_t> Batch::shape() const {
  const auto& field = header().shape();
  return absl::Span<const int64_t>(field.data(), field.size());
}

v1::DType Batch::dtype() const { return header().dtype(); }

v1::Layout Batch::layout() const { return header().layout(); }

absl::Span<const int64_t> Batch::labels() const {
  const auto& field = header().labels();
  return absl::Span<const int64_t>(field.data(), field.size());
}

absl::Span<const uint64_t> Batch::sample_indices() const {
  const auto& field = header().sample_indices();
  return absl::Span<const uint64_t>(field.data(), field.size());
}

absl::Span<const float> Batch::soft_labels() const {
  const auto& field = header().soft_labels();
  return absl::Span<const float>(field.data(), field.size());
}

size_t Batch::num_classes() const {
  return num_samples() == 0 ? 0 : soft_labels().size() / num_samples();
}

uint64_t Batch::job_id() const { return header().task().job_id(); }

uint32_t Batch::epoch() const { return header().task().epoch(); }

uint64_t Batch::batch_index() const { return header().task().batch_index(); }

uint64_t Batch::worker_id() const { return header().worker_id(); }

double Batch::produce_seconds() const { return header().produce_seconds(); }

}  // namespace stoker
