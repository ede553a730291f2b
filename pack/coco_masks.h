#ifndef STOKER_PACK_COCO_MASKS_H_
#define STOKER_PACK_COCO_MASKS_H_

// COCO's instance segmentations made into masks (stoker-pack --coco), and COCO's run-length
// encodings made from masks (the test-set generator writes them).
//
// Polygons are filled by a scanline rule of our own: pixel (x, y) is inside when its centre
// (x + 0.5, y + 0.5) is inside the polygon, by the even-odd rule, an edge owning the rows whose
// centres lie in [its lower y, its upper y) and a row's span owning the centres in
// [left crossing, right crossing). So the polygon of an integer box (x1, y1, x2, y2) fills
// exactly the pixels of [x1, x2) × [y1, y2), the box's pixels (augment/targets/targets.h), and
// two polygons sharing an edge never share a pixel. pycocotools rasterizes polygons otherwise
// (it upsamples the outline by 5 and rounds), so its masks differ from these along edges, by up
// to a pixel. An annotation of several polygons is their union, as pycocotools merges them.
//
// RLE is COCO's: run lengths alternating 0s and 1s, starting with 0s, in column-major order
// (down each column, then across), given as a list of numbers ("uncompressed") or as a string
// (pycocotools' rleToString: each count, from the fourth on as the difference from the count
// two before, in 5-bit groups, low first, each group + 48 as a character, 0x20 meaning "more").
//
// Thread-safe functions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace stoker {

// Fills the polygon `xy` (x1, y1, x2, y2, ...: at least 3 points, coordinates in pixels) into
// `mask` (height × width, row-major, 1 inside, untouched outside) by the rule above.
// REQUIRES: xy.size() is even; mask.size() == height × width.
void FillPolygon(absl::Span<const double> xy, uint32_t height, uint32_t width,
                 absl::Span<uint8_t> mask);

// COCO's compressed count string as counts. INVALID_ARGUMENT naming what is wrong (a character
// out of range, a count over 32 bits or negative, a string ending mid-count) for a string that
// pycocotools would not have written.
absl::StatusOr<std::vector<uint32_t>> DecodeCocoRleString(absl::string_view text);

// Counts as COCO's compressed string (pycocotools' rleToString).
std::string EncodeCocoRleString(absl::Span<const uint32_t> counts);

// Writes the column-major `counts` of a height × width mask into `mask` (row-major, 0 or 1).
// INVALID_ARGUMENT when the counts do not sum to height × width.
// REQUIRES: mask.size() == height × width.
absl::Status CocoRleToMask(absl::Span<const uint32_t> counts, uint32_t height, uint32_t width,
                           absl::Span<uint8_t> mask);

// The column-major counts of row-major `mask` (height × width; nonzero is 1).
std::vector<uint32_t> MaskToCocoRle(absl::Span<const uint8_t> mask, uint32_t height,
                                    uint32_t width);

}  // namespace stoker

#endif  // STOKER_PACK_COCO_MASKS_H_
