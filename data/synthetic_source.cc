#include "data/synthetic_source.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/counter_rng.h"
#include "common/stable_fingerprint.h"

namespace stoker {

SyntheticSource::SyntheticSource(const stoker::v1::SyntheticSource& spec, uint64_t seed)
    : num_samples_(spec.num_samples()),
      num_classes_(spec.num_classes()),
      seed_(seed),
      shape_{spec.height(), spec.width(), spec.channels(), PixelType::kUint8} {}

uint64_t SyntheticSource::fingerprint() const {
  return StableFingerprint()
      .Add("synthetic")
      .Add(num_samples_)
      .Add(uint64_t{shape_.height})
      .Add(uint64_t{shape_.width})
      .Add(uint64_t{shape_.channels})
      .Add(uint64_t{num_classes_})
      .Add(seed_)
      .value();
}

std::string SyntheticSource::Locate(uint64_t index) const {
  return absl::StrCat("synthetic sample ", index);
}

absl::Status SyntheticSource::Read(uint64_t index, SampleBuffer* sample) const {
  if (index >= num_samples_) {
    return absl::OutOfRangeError(
        absl::StrCat("sample ", index, " is past the ", num_samples_, " synthetic samples"));
  }
  sample->image.Reshape(shape_);
  uint8_t* pixels = sample->image.view().pixels<uint8_t>();
  const size_t bytes = shape_.bytes();
  CounterRng rng(KeyOf(seed_ ^ kContentDomain, index, 0));
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t draw = rng.NextU64();
    std::memcpy(pixels + i, &draw, 8);  // x86-64 and aarch64 are little-endian.
  }
  if (i < bytes) {
    const uint64_t draw = rng.NextU64();
    std::memcpy(pixels + i, &draw, bytes - i);
  }
  sample->label = static_cast<int64_t>(index % num_classes_);
  return absl::OkStatus();
}

}  // namespace stoker
