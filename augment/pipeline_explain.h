#ifndef STOKER_AUGMENT_PIPELINE_EXPLAIN_H_
#define STOKER_AUGMENT_PIPELINE_EXPLAIN_H_

// `stoker-ctl pipeline explain` and stoker.explain_pipeline (Python): a pipeline's ops with the
// shape and dtype each produces and what each costs per image on this machine.
//
// The costs are measured, not modelled: the compiled pipeline runs `runs` times on a synthetic
// natural-looking image of the given input shape (for a pipeline starting with decode, that
// image encoded as a quality-90 baseline JPEG), each run with another sample's RNG so random ops
// take their usual range of parameters, and each op's median time is reported (the executor's
// own per-op timing, worker/op_time_histograms' source). The batch stage (MixUp/CutMix) is
// timed on a batch of copies of the output. A photo's content changes decode and a few
// data-dependent ops (equalize, autocontrast) only slightly; a shared or busy machine makes every
// figure larger: they are estimates for sizing, not benchmarks (bench/ has those).
//
// For a pipeline that decodes, it also shows the decoded prefix (augment/pipeline.h: the ops a
// worker's decoded-sample cache may skip on a hit), what one kept entry holds for the synthetic
// input, and the planner's view: the measured cost of a miss (the prefix, compiled for the
// cache), of a hit (copying the entry, then any op the fused decode-and-crop would have taken
// on the window now running on the whole image), of the same ops without the cache (fused
// when the pipeline fuses), and whether the cache pays from the second epoch on.
//
// Thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "augment/decoded_cache_choice.h"
#include "common/clock.h"
#include "image/image.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

struct ExplainOptions {
  // The input image: decoded samples' shape, or the decoded size of an encoded sample's image.
  ImageShape input{375, 500, 3, PixelType::kUint8};
  // Timed runs per op (0: shapes only, no costs).
  int runs = 15;
  // Samples per batch for the batch stage's timing.
  int batch_size = 16;
  // The clock the runs are timed on (tests inject a fake). Not owned.
  Clock* clock = Clock::Real();
};

struct ExplainedOp {
  std::string name;
  // The output of the op for the synthetic input (for decode: as decoded, with any JPEG DCT
  // downscale ahead of a resize).
  ImageShape output;
  // Median seconds per image; negative when not measured.
  double seconds = -1;
};

// The decoded prefix and the planner's view (above); seconds are medians per image, negative
// when not measured.
struct PrefixExplanation {
  size_t prefix_ops = 0;  // ops[0, prefix_ops) are the prefix
  uint64_t fingerprint = 0;
  ImageShape entry;  // One kept entry for the synthetic input (its bytes: entry.bytes())
  // The pipeline without the cache fuses decode-and-crop: ops[1] is then compared too.
  bool fuses_decode_crop = false;
  // ops[0, compared_ops) are what a hit replaces: the prefix, and ops[1] when fused.
  size_t compared_ops = 0;
  double miss_seconds = -1;      // The prefix, compiled for the cache (epoch 1, and evictions)
  double copy_seconds = -1;      // Copying one kept entry
  double hit_seconds = -1;       // The copy and ops[prefix_ops, compared_ops) on the entry
  double uncached_seconds = -1;  // ops[0, compared_ops) without the cache
  // AUTO jobs may take the cache route: the pipeline without the cache never decodes a window at
  // a DCT scale (Pipeline::may_decode_window_downscaled), so both routes give the same bytes.
  bool auto_may_cache = false;
  // Decode CPU spent per byte a kept entry holds (miss_seconds / entry bytes), in nanoseconds.
  double miss_ns_per_byte() const;
  // The costs as the planner's rule takes them (augment/decoded_cache_choice.h): a miss is the
  // prefix and then what a hit does.
  DecodedCacheCosts costs() const;
  // The passes after which the cache pays when every later one hits; 0: never (or unmeasured).
  uint32_t break_even_passes() const;
};

struct PipelineExplanation {
  ImageShape input;
  bool encoded = false;
  std::vector<ExplainedOp> ops;
  // The batch's per-sample output.
  std::vector<int64_t> sample_shape;  // [H, W, C] or [C, H, W]
  std::string output_dtype;           // "uint8" / "float32"
  std::string output_layout;          // "HWC" / "CHW"
  size_t output_bytes_per_sample = 0;
  // With MixUp/CutMix: the stage's description, its classes and its median seconds per image.
  std::string batch_stage;
  uint32_t num_classes = 0;
  double batch_stage_seconds = -1;
  // Median seconds of a whole Pipeline::Run (ops and output conversion); negative: not measured.
  double total_seconds = -1;
  int runs = 0;
  // Set for a pipeline that decodes.
  std::optional<PrefixExplanation> prefix;
};

// Compiles `spec` for options.input (encoded when spec's first op is decode) and measures it.
// Errors: INVALID_ARGUMENT from Pipeline::Compile naming the op and field
// ("pipeline.ops[2] (gaussian_blur): ksize must be odd and > 0, got 4"), or for an empty input
// shape; a failing run's error (e.g. a crop larger than the input), prefixed "running on a
// HxWxC image: ".
absl::StatusOr<PipelineExplanation> ExplainPipeline(const stoker::v1::PipelineSpec& spec,
                                                    const ExplainOptions& options);

// A table: one line per op (index, name, output shape and dtype, µs per image, ns per output
// element), the batch stage, the total and images/s per core, then the output and how the costs
// were obtained; then the decoded prefix (its ops, fingerprint in hex, entry size), the
// planner's costs and its verdict ("decoded cache: worth it from epoch 2: a hit costs X ms, the
// fused decode+crop Y ms", or "... not worth it: ..."), and what an AUTO job does.
std::string FormatExplanation(const PipelineExplanation& explanation);

// "375x500x3" → ImageShape (uint8). INVALID_ARGUMENT naming `field` otherwise.
absl::StatusOr<ImageShape> ParseInputShape(const std::string& text, const std::string& field);

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_EXPLAIN_H_
