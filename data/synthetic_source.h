#ifndef STOKER_DATA_SYNTHETIC_SOURCE_H_
#define STOKER_DATA_SYNTHETIC_SOURCE_H_

// Random uint8 HWC images generated from (seed, sample index) alone: the blur reference
// workload's input (docs/architecture.md, Reference workloads) with no I/O. Label = index mod
// num_classes. The pixels of sample i are the bytes of
// CounterRng(KeyOf(seed ^ kContentDomain, i, 0)) draws, little-endian, 8 pixels per draw.

#include "data/source.h"

namespace stoker {

// Immutable, thread-safe.
class SyntheticSource : public Source {
 public:
  SyntheticSource(const stoker::v1::SyntheticSource& spec, uint64_t seed);

  uint64_t size() const override { return num_samples_; }
  InputFormat format() const override { return InputFormat::Decoded(shape_); }
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override;
  std::string Locate(uint64_t index) const override;
  // From the parameters that make the pixels: the count, the shape, the classes and the seed.
  uint64_t fingerprint() const override;

 private:
  uint64_t num_samples_;
  uint32_t num_classes_;
  uint64_t seed_;
  ImageShape shape_;
};

}  // namespace stoker

#endif  // STOKER_DATA_SYNTHETIC_SOURCE_H_
