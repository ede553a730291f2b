#ifndef STOKER_AUGMENT_PIPELINE_MOVES_H_
#define STOKER_AUGMENT_PIPELINE_MOVES_H_

// The target moves (augment/targets/target_move.h) of the pipeline's own steps, which are not
// ops' Apply: a JPEG decoded downscaled, and the fused decode-and-crop's window (pipeline.h).
// Used by augment/pipeline.cc only.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "augment/kernels/decode.h"
#include "augment/op.h"
#include "augment/targets/target_move.h"
#include "augment/targets/targets.h"
#include "common/counter_rng.h"
#include "image/image.h"

namespace stoker {

// A resize from the header's size to `decoded` when they differ (a 1/d-scale decode); returns
// whether it appended one.
bool AppendDecodeMove(const EncodedHeader& header, const ImageShape& decoded, TargetMoves* moves);

// The moves of `op` (ops[1]) run on the window it drew from a `full`-size image with `rng`
// (a copy taken before its draws): op's own moves at full scale; decoded at 1/denominator
// scale, a resize to `scaled` (the 1/d decode's size), the crop of `region` in it, and the
// resize of that to the op's output.
void AppendWindowMoves(const Op& op, const ImageShape& full, CounterRng rng, uint32_t denominator,
                       const ImageShape& scaled, const PixelRect& region, TargetMoves* moves);

// Merges moves[0] and moves[1] into one resize when both are resizes (a downscaled decode, then
// the resize op it was downscaled for: one resize from the full size, as torchvision does).
void MergeFirstResizes(TargetMoves* moves);

// The boxes of `source` (empty without boxes) after `moves` (those of a tracked run so far;
// `decode_downscaled` as in RunWithTargets), for an op that chooses from the boxes.
// Errors: MoveTargets'.
absl::StatusOr<std::vector<float>> BoxesAfter(const SampleTargets& source, const TargetMoves& moves,
                                              bool decode_downscaled);

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_MOVES_H_
