#ifndef STOKER_AUGMENT_OP_H_
#define STOKER_AUGMENT_OP_H_

// An op is one step of the augmentation pipeline: a thin adapter (DALI's operator) between the
// pipeline executor and a kernel (augment/kernels/, a pure function on image views). An op is
// created by the registry (augment/op_registry.h) from its proto, for one input shape, after its
// arguments have been validated; it then knows its output shape and only runs the kernel.
//
// Shapes: channels and pixel type are always known when the pipeline is compiled. Height and
// width are too for decoded inputs; after `decode` they vary per sample, and a compile-time
// shape then has height == width == 0 ("varies"). Such an op checks what it can at compile time
// and the rest per sample in OutputShapeFor. An op whose output size is fixed (resize to an
// exact size, the crops) has a fixed output shape whatever its input.
//
// Randomness and the determinism contract (docs/architecture.md, Work model). Each op draws from
// the sample's CounterRng, in pipeline order, exactly the draws listed here, whatever their
// outcome, so the output depends only on (seed, epoch, sample index) and the compiled pipeline:
//
//   decode           no draw.
//   resize           no draw.
//   center_crop      no draw.
//   random_resized_crop  up to 10 attempts of two draws each, stopping at the first that fits:
//                    scale = rng->UniformFloat(scale_min, scale_max), then
//                    log_ratio = rng->UniformFloat(log(ratio_min), log(ratio_max)); on success
//                    two more: top = rng->UniformInt(H - h + 1), left = rng->UniformInt(W - w + 1).
//                    After 10 misses no further draw (center-crop fallback).
//   color_jitter     five draws: the order of the three adjustments, rng->UniformInt(3) then
//                    rng->UniformInt(2) (Fisher-Yates from the back of {brightness, contrast,
//                    saturation}); then rng->UniformFloat(max(0, 1 - x), 1 + x) for brightness,
//                    contrast and saturation in that order, drawn even when x is 0. With hue > 0
//                    seven: UniformInt(4), UniformInt(3), UniformInt(2) (order of the four, hue
//                    last in the set), the three factors, then UniformFloat(-hue, hue).
//   grayscale        no draw.
//   to_float         no draw.
//   gaussian_blur    fixed sigma: no draw. Range: one rng->UniformFloat(sigma_min, sigma_max);
//                    the same sigma is used along both axes (like torchvision).
//   random_crop      two draws: top = rng->UniformInt(H - h + 1), then
//                    left = rng->UniformInt(W - w + 1) (UniformInt(1) still draws, returning 0).
//   horizontal_flip  one draw: flip when rng->UniformFloat() < p (also drawn when p is 0 or 1).
//   vertical_flip, invert, posterize, solarize, autocontrast, random_grayscale, equalize,
//   adjust_sharpness, adjust_hue: the same single draw, applying the op when
//                    rng->UniformFloat() < p (adjust_hue: p = 1).
//   affine           no draw.
//   random_rotation  one draw: angle = rng->UniformFloat(degrees_min, degrees_max).
//   random_affine    angle = UniformFloat(degrees_min, degrees_max); with translate, tx then ty
//                    = UniformFloat(-f * size, f * size) rounded half to even; with a scale
//                    range, UniformFloat(scale_min, scale_max); with shear, x then (4 values) y.
//   random_erasing   one draw (apply when rng->UniformFloat() < p); if applied, up to 10
//                    attempts of two draws (area fraction UniformFloat(scale_min, scale_max),
//                    log ratio UniformFloat(log ratio_min, log ratio_max)), stopping at the first
//                    that fits; then top = UniformInt(H - h + 1), left = UniformInt(W - w + 1);
//                    with value_random, two UniformFloat per pair of noise values (Box-Muller),
//                    row-major HWC.
//   normalize        no draw.
//   random_perspective  one draw (apply when rng->UniformFloat() < p); if applied, eight
//                    randint draws lo + rng->UniformInt(hi - lo), in RandomPerspective.get_params'
//                    order (top-left x, y, top-right x, y, bottom-right x, y, bottom-left x, y).
//   random_apply     one rng->UniformFloat(); when < p the nested ops run in order, each with
//                    its own draws. random_choice: one rng->UniformDouble() (times the sum of the
//                    weights), then the chosen op's draws. random_order: Fisher-Yates from the
//                    back (rng->UniformInt(n), ..., UniformInt(2)), then each op's draws in the
//                    drawn order.
//   rand_augment     per operation (num_ops): rng->UniformInt(14), then for a signed operation
//                    rng->UniformInt(2) (1: negated). trivial_augment_wide: one operation, with
//                    rng->UniformInt(num_magnitude_bins) between the two for an operation that
//                    has magnitudes.
//   auto_augment     rng->UniformInt(25), two UniformFloat, two UniformInt(2) (get_params).
//   aug_mix          Gamma(alpha) variates (SampleGamma, augment/ops/policy_space.h): two, then
//                    mixture_width; then per chain: its depth (1 + rng->UniformInt(3), unless
//                    chain_depth > 0), and per operation UniformInt(9 or 13), for one with
//                    magnitudes UniformInt(severity), for a signed one UniformInt(2).
//   sanitize_boxes   no draw.
//   zoom_out         one draw: zoom out when rng->UniformFloat() < p (also drawn when p is 0 or
//                    1); then three: r = side_min + (side_max - side_min) * rng->UniformFloat(),
//                    then rng->UniformFloat() for left, then rng->UniformFloat() for top.
//   random_iou_crop  rounds of: the option, rng->UniformInt(number of sampler_options); an option
//                    >= 1 ends with no crop; else up to `trials` trials of two draws
//                    (rng->UniformFloat() for the width factor, then for the height factor),
//                    and for a trial whose aspect ratio is in range two more (UniformFloat() for
//                    left, then for top); the first crop that passes ends. After 100 rounds with
//                    no crop (v2 loops on) no further draw, no crop. Without boxes no crop passes.
//
// Changing the order or number of draws changes every augmented sample of every job: don't,
// except in a new op.

#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "augment/kernels/decode.h"
#include "augment/targets/target_move.h"
#include "common/counter_rng.h"
#include "image/image.h"

namespace stoker {

// Immutable after creation: Apply may run concurrently from many threads as long as each call
// has its own rng, scratch and output.
class Op {
 public:
  virtual ~Op() = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  // The registry name ("gaussian_blur").
  const std::string& name() const { return name_; }
  // The shape the op was validated for, and the shape it produces from it; height and width are
  // 0 where they vary per sample (see above).
  const ImageShape& input_shape() const { return input_shape_; }
  const ImageShape& output_shape() const { return output_shape_; }

  // The shape produced from an input of `in` (a run-time shape, with the compile-time channels
  // and type). The default takes the output's height and width from output_shape(), or from `in`
  // where output_shape() leaves them 0. Ops with size limits override it to check them.
  // Errors: INVALID_ARGUMENT when `in` is too small for the op (e.g. a crop larger than the
  // decoded image), naming the sizes.
  virtual absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const;

  // True when the op resamples the whole image to a size that does not depend on the input's
  // resolution beyond its aspect ratio (resize), so that decode may hand it a copy downscaled
  // in the DCT domain as long as that is at least OutputShapeFor's size in both dimensions.
  virtual bool ResamplesWholeImage() const { return false; }

  // Fused decode-and-crop (augment/pipeline.h). An op that reads one window of its input and
  // nothing else (center_crop, random_crop without fixed padding, random_resized_crop) returns
  // true and implements the three calls below, with Apply(in, rng) exactly
  // ApplyToWindow(in, *DrawWindow(in.shape, rng)) whenever DrawWindow gives a window; the
  // executor may then decode only that window of a JPEG and hand it over as a whole image.
  virtual bool ReadsWindow() const { return false; }
  // Makes the draws Apply would make (the same, in the same order; op.h's list) and returns the
  // window of an input of `in`'s size that Apply would read; nullopt, drawing nothing, where this
  // input is not read as one window (random_crop's pad_if_needed must pad it): the executor
  // then runs Apply.
  // REQUIRES: ReadsWindow(); OutputShapeFor(in) is OK.
  virtual std::optional<PixelRect> DrawWindow(const ImageShape& in, CounterRng* rng) const;
  // Writes the op's output from `window` of `in` (no draw).
  // REQUIRES: ReadsWindow(); window is non-empty and inside `in`; for the crops window's size is
  //   the output's; out.shape == output_shape(); `in` and `out` do not overlap.
  // Errors: INTERNAL when a kernel fails.
  virtual absl::Status ApplyToWindow(const ImageView& in, const PixelRect& window,
                                     const ImageView& out) const;
  // True when ApplyToWindow resamples the window with a filter (bilinear, area) that may be fed
  // the window decoded at 1/2, 1/4 or 1/8 scale in the DCT domain when it is at least that many
  // times the output's size (within the tolerance docs/augmentations.md states); false for
  // copies and for PIL-exact resampling.
  virtual bool WindowMayBeDownscaled() const { return false; }

  // Fused blur chains (augment/pipeline.h). gaussian_blur returns its ksize; other ops 0.
  virtual int BlurKsize() const { return 0; }
  // Makes the draws Apply would make (op.h's list) and returns the BlurKsize() 1-D weights Apply
  // would blur with: the op's fixed weights, or weights drawn into `drawn` (BlurKsize() floats).
  // REQUIRES: BlurKsize() > 0.
  virtual const float* BlurWeights(CounterRng* rng, float* drawn) const;

  // True when Apply may draw from its rng (op.h's list): the schema's RngDraws answer
  // (augment/op_registry.h); an op whose schema says kByArgs overrides it (gaussian_blur: a
  // sigma range), and an unknown name answers true.
  virtual bool Draws() const;

  // True when Apply accepts out.data == in.data (an in-place run).
  virtual bool SupportsInPlace() const { return false; }

  // True when each output element is a fixed function of the input element and its channel
  // alone, with no draw (to_float, normalize): the executor may then replace a run of such ops
  // on uint8 input by a table of what they give each of the 256 values (augment/pipeline.h),
  // which it makes by calling Apply on an image of the op's width (where fixed) and any height.
  virtual bool MapsElementsPerChannel() const { return false; }

  // Transforms `in` into `out`, drawing randomness from `rng` as documented above. `scratch` is a
  // per-thread buffer the op may Reshape and overwrite (it never shrinks, so steady state does not
  // allocate).
  // REQUIRES: in.shape matches input_shape() (height and width only where not 0);
  //   out.shape == *OutputShapeFor(in.shape); out.data is in.data only
  //   when SupportsInPlace(), otherwise the two do not overlap; `scratch` is not `in` or `out`.
  // Errors: INTERNAL when a kernel fails (e.g. an OpenCV exception).
  virtual absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                             const ImageView& out) const = 0;

  // Targets (augment/targets/: boxes, masks, keypoints). The op's schema says what it does to
  // them (OpSchema::targets); a pipeline compiled for samples with targets runs ApplyTracked
  // instead of Apply and moves the targets as the moves it returns say.
  //
  // OK when the op may run on a sample with targets. Errors: INVALID_ARGUMENT, without the
  // "pipeline.ops[i] (name): " prefix, for an op that moves pixels but cannot move targets
  // ("moves pixels and cannot move boxes, masks or keypoints"); combinators name the nested op
  // ("ops[1] (rand_augment): ...").
  virtual absl::Status CheckMovesTargets() const;
  // Makes the draws Apply would make for an input of `in`'s size (the same, in the same order:
  // op.h's list) and appends the moves Apply makes of the image to `moves` (none where it
  // leaves pixels in place: a photometric op, a flip not applied). Geometric ops override it;
  // the default appends nothing and draws nothing, which is right for photometric ops because
  // ApplyTracked gives it a copy of the rng. Combinators keep the default and override
  // ApplyTracked instead (their nested photometric ops' draws decide later ops' draws).
  // REQUIRES: CheckMovesTargets() is OK; OutputShapeFor(in) is OK.
  virtual void DrawTargetMoves(const ImageShape& in, CounterRng* rng, TargetMoves* moves) const;
  // Apply, appending the moves it made to `moves`: by default DrawTargetMoves on a copy of
  // `rng`, then Apply; combinators override it to track the ops they run.
  // REQUIRES and errors: as Apply, and CheckMovesTargets() is OK.
  virtual absl::Status ApplyTracked(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                                    const ImageView& out, TargetMoves* moves) const;

  // Ops whose output size is drawn per sample (zoom_out, random_iou_crop) return true: the
  // executor sizes each output with DrawOutputShape, and their OutputShapeFor answers "varies"
  // (height and width 0). Nested in a combinator they are refused (a nested op keeps the shape).
  virtual bool DrawsOutputSize() const { return false; }
  // Ops that choose from the sample's boxes (random_iou_crop) return true: a pipeline run with
  // targets hands them the boxes as they are at that step (XYXY pixels of the op's input) in
  // the two calls below. Apply sees no boxes, as a sample without boxes would.
  virtual bool ChoosesFromBoxes() const { return false; }
  // Makes on `rng` (the executor passes a copy) the draws Apply would make for an input of `in`
  // with `boxes` (empty: none), and returns the shape it would write.
  // REQUIRES: DrawsOutputSize().
  virtual absl::StatusOr<ImageShape> DrawOutputShape(const ImageShape& in, CounterRng rng,
                                                     absl::Span<const float> boxes) const;
  // ApplyTracked choosing from `boxes` (XYXY pixels of `in`).
  // REQUIRES: ChoosesFromBoxes(); out.shape == *DrawOutputShape(in.shape, *rng, boxes).
  virtual absl::Status ApplyTrackedWithBoxes(const ImageView& in, absl::Span<const float> boxes,
                                             CounterRng* rng, const ImageView& out,
                                             TargetMoves* moves) const;

  // Ops that take encoded bytes instead of an image (decode, which must be the first op of a
  // pipeline compiled for encoded input) return true and implement the two calls below; the
  // executor then calls ReadEncoded, sizes `out`, and calls DecodeInto, never Apply.
  virtual bool TakesEncodedInput() const { return false; }
  // Checks `bytes` and returns the shape DecodeInto will produce, which is the image's size,
  // or a 1/2, 1/4 or 1/8 JPEG downscale when `next` (the op after this one, or nullptr)
  // ResamplesWholeImage and still gets at least the size it produces.
  // Errors: bad-sample errors (common/bad_sample.h).
  virtual absl::StatusOr<ImageShape> ReadEncoded(absl::Span<const uint8_t> bytes, const Op* next,
                                                 ImageDecoder* decoder) const;
  // The shape ReadEncoded returns for an image of `header` (its size and format).
  // REQUIRES: TakesEncodedInput().
  virtual ImageShape DecodedShape(const EncodedHeader& header, const Op* next) const;
  // REQUIRES: ReadEncoded(bytes, ...) just returned out.shape on the same decoder.
  // Errors: bad-sample errors.
  virtual absl::Status DecodeInto(absl::Span<const uint8_t> bytes, ImageDecoder* decoder,
                                  const ImageView& out) const;

 protected:
  Op(std::string name, const ImageShape& input_shape, const ImageShape& output_shape)
      : name_(std::move(name)), input_shape_(input_shape), output_shape_(output_shape) {}

 private:
  const std::string name_;
  const ImageShape input_shape_;
  const ImageShape output_shape_;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_OP_H_
