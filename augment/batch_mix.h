#ifndef STOKER_AUGMENT_BATCH_MIX_H_
#define STOKER_AUGMENT_BATCH_MIX_H_

// The batch-level stage of a pipeline: MixUp / CutMix (stoker.v1.BatchMixOp), run once per batch
// after every sample has been through the per-sample ops, on the packed batch tensor in the
// job's output dtype and layout. Labels become soft (num_classes floats per sample).
//
// Randomness and determinism. The stage draws from the batch's own CounterRng,
// BatchRng(seed, epoch, global batch index), never from a sample's, so a batch is identical
// whichever worker or thread made it, and a resumed job remakes it bit for bit. Draws, in order,
// whatever their outcome:
//   1. apply = rng->UniformDouble() < p                         (always drawn, p = 1 included)
//   2. cutmix = rng->UniformDouble() < switch_prob              (only with both alphas > 0;
//                                                                 one alpha alone picks its op)
//   only when applied:
//   3. lam ~ Beta(alpha, alpha): G1 / (G1 + G2), G ~ Gamma(alpha) by Marsaglia-Tsang (normals
//      by Box-Muller, two UniformDouble each; alpha < 1 through Gamma(alpha + 1) * U^(1/alpha)),
//      a variable but deterministic number of draws;
//   4. CutMix only: r_x = rng->UniformInt(W), then r_y = rng->UniformInt(H), and torchvision's
//      box: r = 0.5 sqrt(1 - lam), half sizes int(r W), int(r H), clamped to the image;
//      lam = 1 - box area / image area.
// A batch not applied gets one-hot labels.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "augment/kernels/mix.h"
#include "augment/op_registry.h"
#include "common/counter_rng.h"
#include "image/image.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// The text forms of the stage (augment/pipeline_text.h), all filling PipelineSpec.batch_mix:
//   mixup(alpha=1.0, num_classes)            torchvision v2 MixUp
//   cutmix(alpha=1.0, num_classes)           torchvision v2 CutMix; with mixup: timm's switch
//   mixup_cutmix(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, p=1.0, num_classes)
//                                            timm's Mixup (DeiT's defaults)
// Their schemas (op_case OP_NOT_SET, no factory); an argument without a default is required.
const std::vector<OpSchema>& BatchOpSchemas();
// nullptr when `name` is not a batch-level op.
const OpSchema* FindBatchOpSchema(std::string_view name);
// "mixup, cutmix, mixup_cutmix", for error messages.
std::string KnownBatchOpNames();
// The BatchMixOp field that argument `arg` of batch op `op` sets ("mixup", "alpha" →
// "mixup_alpha"; otherwise `arg` itself).
std::string BatchMixField(std::string_view op, std::string_view arg);

// The RNG of a batch's batch-level stage: rng(seed, epoch, global batch index) in its own
// domain, apart from every sample's.
CounterRng BatchRng(uint64_t seed, uint32_t epoch, uint64_t batch_index);

// One Beta(alpha, alpha) draw as the stage makes it (draw 3 above). REQUIRES: alpha > 0.
double DrawBetaSymmetric(double alpha, CounterRng* rng);

// torchvision v2 CutMix's box for `lam` around the centre (r_x, r_y) of a height × width image.
PixelRect CutmixBox(double lam, uint32_t r_x, uint32_t r_y, uint32_t height, uint32_t width);

// What the stage does to one batch.
struct BatchMixParams {
  enum class Kind { kNone, kMixup, kCutmix };
  Kind kind = Kind::kNone;
  // The label weight of each sample itself (1 - lam goes to the previous sample); for CutMix
  // the box-adjusted value.
  double lam = 1.0;
  // CutMix's box (empty otherwise).
  PixelRect box;
};

// Immutable after Create: thread-safe.
class BatchMix {
 public:
  // Validates `spec` for batches of images of `image` shape in `dtype` and `layout` (the
  // pipeline's output). Errors: INVALID_ARGUMENT naming the field ("pipeline.batch_mix.
  // num_classes: must be > 0"), also when neither alpha is > 0 or the dtype is not uint8 or
  // float32.
  static absl::StatusOr<BatchMix> Create(const stoker::v1::BatchMixOp& spec,
                                         const ImageShape& image, stoker::v1::DType dtype,
                                         stoker::v1::Layout layout);

  uint32_t num_classes() const { return num_classes_; }

  // Draws a batch's parameters (see the header comment).
  BatchMixParams Draw(CounterRng* rng) const;

  // Mixes `batch` (labels.size() samples packed in the output format) in place as `params` say
  // and writes labels.size() * num_classes() soft labels to `soft_labels`. `scratch` holds one
  // sample. Errors: INVALID_ARGUMENT when a label is outside [0, num_classes) (naming it and its
  // position), before anything is changed.
  absl::Status Apply(const BatchMixParams& params, uint8_t* batch, absl::Span<const int64_t> labels,
                     ImageBuffer* scratch, float* soft_labels) const;

 private:
  BatchMix() = default;

  uint32_t num_classes_ = 0;
  double mixup_alpha_ = 0;
  double cutmix_alpha_ = 0;
  double switch_prob_ = 0.5;
  double p_ = 1.0;
  ImageShape image_;
  bool chw_ = false;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_BATCH_MIX_H_
