#ifndef STOKER_AUGMENT_TARGETS_MOVE_TARGETS_H_
#define STOKER_AUGMENT_TARGETS_MOVE_TARGETS_H_

// Applies the moves an image went through (target_move.h) to its targets (targets.h), as
// torchvision.transforms.v2's kernels do (torchvision/transforms/v2/functional/_geometry.py):
//
//   boxes      each box's four corners go through the move, the result is made axis-aligned
//              again (min and max of the corners) and, for crops, affine and perspective warps,
//              clamped to the output canvas (v2's clamp_bounding_boxes); resize scales by the
//              float32 ratio out / in, as v2 does.
//   keypoints  each point goes through the move, unclamped; flips mirror about the last pixel
//              (x' = W - 1 - x), as v2's horizontal_flip_keypoints, where boxes mirror about
//              the canvas edge (x' = W - x).
//   masks      instance and semantic masks alike, resampled by the image kernels with
//              nearest-neighbour sampling: crops and flips copy, resize picks torch's nearest
//              source pixel (ResizeMaskNearest), pad uses the image's padding mode, the warps are
//              AffineWarp / PerspectiveWarp with nearest sampling. Pixels from outside the image
//              are 0 in instance masks (v2's default: "no object") and kSemanticMaskFill (255,
//              "ignore") in a semantic mask (targets.h says why); neither is a job option.
//   sanitize   drops the boxes with width or height below min_size, or outside the canvas,
//              with their labels, instance masks and keypoints (v2's SanitizeBoundingBoxes); a
//              semantic mask stays whole.
//
// Pure functions; thread-safe on distinct targets.

#include <cstdint>

#include "absl/status/status.h"
#include "augment/targets/target_move.h"
#include "augment/targets/targets.h"
#include "image/image.h"

namespace stoker {

// Applies `moves` in order to `targets`.
// REQUIRES: ValidateTargets(*targets) is OK.
// Errors: INVALID_ARGUMENT when a move starts from a canvas other than the targets' at that
// point ("targets.canvas_size 40x50 differs from the image's 48x64 at move 0 (crop)").
absl::Status MoveTargets(const TargetMoves& moves, SampleTargets* targets);

// torch.nn.functional.interpolate(mode="nearest") on one uint8 channel (torchvision 0.14's
// F.resize with NEAREST on tensors): out(y, x) = in(min(floor(y * (float)H / h), H - 1), ...).
// REQUIRES: in and out are 1-channel uint8, non-empty, not overlapping.
void ResizeMaskNearest(const ImageView& in, const ImageView& out);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TARGETS_MOVE_TARGETS_H_
