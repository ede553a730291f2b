#include "augment/pipeline_moves.h"

#include <utility>

#include "augment/targets/move_targets.h"
#include "common/status_macros.h"

namespace stoker {

bool AppendDecodeMove(const EncodedHeader& header, const ImageShape& decoded, TargetMoves* moves) {
  if (decoded.height == header.height && decoded.width == header.width) return false;
  moves->push_back(ResizeMove(header.height, header.width, decoded.height, decoded.width));
  return true;
}

void AppendWindowMoves(const Op& op, const ImageShape& full, CounterRng rng, uint32_t denominator,
                       const ImageShape& scaled, const PixelRect& region, TargetMoves* moves) {
  if (denominator == 1) {
    op.DrawTargetMoves(full, &rng, moves);
    return;
  }
  const ImageShape& out = op.output_shape();
  moves->push_back(ResizeMove(full.height, full.width, scaled.height, scaled.width));
  moves->push_back(
      CropMove(scaled.height, scaled.width, region.top, region.left, region.height, region.width));
  moves->push_back(ResizeMove(region.height, region.width, out.height, out.width));
}

void MergeFirstResizes(TargetMoves* moves) {
  if (moves->size() < 2) return;
  TargetMove& first = (*moves)[0];
  const TargetMove& second = (*moves)[1];
  if (first.kind != TargetMove::Kind::kResize || second.kind != TargetMove::Kind::kResize) return;
  first = ResizeMove(first.in_height, first.in_width, second.out_height, second.out_width);
  moves->erase(moves->begin() + 1);
}

absl::StatusOr<std::vector<float>> BoxesAfter(const SampleTargets& source, const TargetMoves& moves,
                                              bool decode_downscaled) {
  if (!source.boxes) return std::vector<float>();
  SampleTargets boxes_only;
  boxes_only.canvas_height = source.canvas_height;
  boxes_only.canvas_width = source.canvas_width;
  boxes_only.boxes = source.boxes;
  TargetMoves so_far = moves;
  if (decode_downscaled) MergeFirstResizes(&so_far);
  RETURN_IF_ERROR(MoveTargets(so_far, &boxes_only));
  return std::move(*boxes_only.boxes);
}

}  // namespace stoker
