#include "augment/kernels/mix.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stoker {
namespace {

size_t SampleBytes(const BatchTensorView& batch) { return batch.image.bytes(); }

uint8_t* Sample(const BatchTensorView& batch, size_t i) {
  return batch.data + i * SampleBytes(batch);
}

// x = a * x + b * y over n elements (torchvision's order: y * b + x * a).
void MixFloat(float* x, const float* y, size_t n, float a, float b) {
  for (size_t k = 0; k < n; ++k) x[k] = y[k] * b + x[k] * a;
}

void MixUint8(uint8_t* x, const uint8_t* y, size_t n, float a, float b) {
  for (size_t k = 0; k < n; ++k) {
    const float v = static_cast<float>(y[k]) * b + static_cast<float>(x[k]) * a;
    x[k] = static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
  }
}

// Mixes sample `i` with `previous` (sample i-1 as it was before mixing).
void MixSample(const BatchTensorView& batch, size_t i, const uint8_t* previous, float a, float b) {
  const size_t n = batch.image.elements();
  if (batch.image.type == PixelType::kFloat32) {
    MixFloat(reinterpret_cast<float*>(Sample(batch, i)), reinterpret_cast<const float*>(previous),
             n, a, b);
  } else {
    MixUint8(Sample(batch, i), previous, n, a, b);
  }
}

// Copies `box` of `from` into `to` (both one sample of the batch's image shape).
void CopyBox(const BatchTensorView& batch, const uint8_t* from, uint8_t* to, const PixelRect& box) {
  const ImageShape& image = batch.image;
  const size_t pixel = PixelTypeSize(image.type);
  if (batch.chw) {
    const size_t plane = size_t{image.height} * image.width * pixel;
    const size_t row = size_t{image.width} * pixel;
    for (uint32_t c = 0; c < image.channels; ++c) {
      for (uint32_t y = box.top; y < box.top + box.height; ++y) {
        const size_t offset = c * plane + y * row + box.left * pixel;
        std::memcpy(to + offset, from + offset, box.width * pixel);
      }
    }
    return;
  }
  const size_t px = image.channels * pixel;
  const size_t row = size_t{image.width} * px;
  for (uint32_t y = box.top; y < box.top + box.height; ++y) {
    const size_t offset = y * row + box.left * px;
    std::memcpy(to + offset, from + offset, box.width * px);
  }
}

// Copies the last sample into `scratch` (x[-1] for sample 0, before it is overwritten).
const uint8_t* SaveLast(const BatchTensorView& batch, ImageBuffer* scratch) {
  scratch->Reshape(batch.image);
  std::memcpy(scratch->view().data, Sample(batch, batch.batch_size - 1), SampleBytes(batch));
  return static_cast<const uint8_t*>(scratch->view().data);
}

}  // namespace

void MixupBatch(const BatchTensorView& batch, double lam, ImageBuffer* scratch) {
  if (batch.batch_size == 0) return;
  const float a = static_cast<float>(lam);
  const float b = static_cast<float>(1.0 - lam);
  const uint8_t* last = SaveLast(batch, scratch);
  // Downwards, so x[i-1] is still unmixed when x[i] reads it.
  for (size_t i = batch.batch_size - 1; i > 0; --i) MixSample(batch, i, Sample(batch, i - 1), a, b);
  MixSample(batch, 0, last, a, b);
}

void CutmixBatch(const BatchTensorView& batch, const PixelRect& box, ImageBuffer* scratch) {
  if (batch.batch_size == 0 || box.height == 0 || box.width == 0) return;
  const uint8_t* last = SaveLast(batch, scratch);
  for (size_t i = batch.batch_size - 1; i > 0; --i) {
    CopyBox(batch, Sample(batch, i - 1), Sample(batch, i), box);
  }
  CopyBox(batch, last, Sample(batch, 0), box);
}

void MixLabels(absl::Span<const int64_t> labels, uint32_t num_classes, double lam, float* out) {
  const size_t n = labels.size();
  std::fill(out, out + n * num_classes, 0.0f);
  const float a = static_cast<float>(lam);
  const float b = static_cast<float>(1.0 - lam);
  for (size_t i = 0; i < n; ++i) {
    const int64_t previous = labels[(i + n - 1) % n];
    float* row = out + i * num_classes;
    row[previous] += b;  // torchvision: label.roll(1).mul_(1 - lam).add_(label.mul(lam))
    row[labels[i]] += a;
  }
}

}  // namespace stoker
