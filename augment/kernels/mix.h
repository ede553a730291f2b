#ifndef STOKER_AUGMENT_KERNELS_MIX_H_
#define STOKER_AUGMENT_KERNELS_MIX_H_

// Batch-level MixUp and CutMix kernels (torchvision v2's formulation): sample i is mixed with
// sample i-1, sample 0 with the last (torchvision's x.roll(1, 0)). Pure functions on a packed
// batch tensor, in place; thread-safe on distinct batches.

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "augment/kernels/resize.h"
#include "image/image.h"

namespace stoker {

// batch_size samples packed one after another, each an image of `image` (HWC, or CHW when
// `chw`), uint8 or float32.
struct BatchTensorView {
  uint8_t* data = nullptr;
  size_t batch_size = 0;
  ImageShape image;
  bool chw = false;
};

// x[i] = lam * x[i] + (1 - lam) * x[i-1] for every i (x[-1] is the last sample), computed in
// float32 as torchvision does (x.roll(1).mul_(1 - lam).add_(x.mul(lam)), the two weights rounded
// to float32 from double); uint8 samples get the result rounded half to even and clamped.
// `scratch` is reshaped to hold one sample.
void MixupBatch(const BatchTensorView& batch, double lam, ImageBuffer* scratch);

// Pastes rows box.top..box.top+box.height-1, columns box.left..box.left+box.width-1 of x[i-1]
// into x[i] for every i (torchvision's CutMix: output[..., y1:y2, x1:x2] = rolled[...]).
// `scratch` is reshaped to hold one sample. REQUIRES: box inside the image.
void CutmixBatch(const BatchTensorView& batch, const PixelRect& box, ImageBuffer* scratch);

// Soft labels: row i = lam * one_hot(labels[i]) + (1 - lam) * one_hot(labels[i-1]), as float32
// (the label rows summed like the images). `out` has labels.size() * num_classes floats.
// REQUIRES: every label in [0, num_classes).
void MixLabels(absl::Span<const int64_t> labels, uint32_t num_classes, double lam, float* out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_MIX_H_
