#ifndef STOKER_AUGMENT_KERNELS_JPEG_RESTART_WINDOW_H_
#define STOKER_AUGMENT_KERNELS_JPEG_RESTART_WINDOW_H_

// Cutting a restart-marked JPEG down to the restart intervals a window needs, for the fused
// decode of decode_jpeg_region.h.
//
// A sequential JPEG cannot be entered in the middle of its scan: to reach a window, a decoder
// entropy-decodes every row above it and every column beside it (for RandomResizedCrop on
// 500 × 375 photos, 87 % of the file's Huffman work on average). A restart marker resets the
// DC predictors, so each restart interval decodes on its own. When every MCU row holds whole
// intervals (stoker-pack --restart-markers writes them so, jpeg_restart_markers.h), the
// intervals that cover the window form a smaller JPEG of their own: the headers the decode
// reads (not EXIF and other application segments, nor comments) with the sub-image's size in
// the frame header, the intervals' entropy-coded bytes, their restart markers renumbered, and
// an EOI. Decoding it costs about 56 % of that Huffman work.
//
// The sub-image reaches past the window by two chroma samples on each side (unless an image
// edge is nearer), since fancy upsampling reads the neighbouring chroma samples and treats the
// sub-image's own edges as image edges; its blocks' pixels are otherwise computed exactly as in
// the whole image, so a window cut from it equals the whole decode's, byte for byte
// (decode_jpeg_region_test.cc checks it at every scale and subsampling).
//
// Only what is checked is used: a baseline or extended sequential Huffman frame of 8-bit
// samples, one scan holding every component, a restart interval dividing the MCUs of a row,
// restart markers in sequence up to the window's last interval, and an EOI at the file's end.
// Anything else (progressive or arithmetic-coded files, no DRI, a damaged or truncated file)
// is not cut, and the caller decodes the whole file as before, so the verdict on a damaged file
// does not change.

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "image/image.h"

namespace stoker {

// The sub-image JPEG and its place. Reused between cuts to keep their buffers.
struct RestartCut {
  std::vector<uint8_t> jpeg;  // A whole JPEG of the sub-image.
  uint32_t top = 0;           // The sub-image's origin in the image decoded at the same scale.
  uint32_t left = 0;
  // Scratch: where each restart interval's entropy-coded bytes end in the file (at its marker;
  // the next interval begins two bytes later).
  std::vector<uint32_t> interval_end;
};

// How far a decoded span reaches past its window, in chroma samples (2 × the largest sampling
// factor in pixels, at the decoded scale): fancy upsampling reads the neighbouring chroma sample
// and treats a span's ends as image edges. Shared by the cut and decode_jpeg_region.cc's
// column span.
inline constexpr uint32_t kMarginChromaSamples = 2;

// True when an EOI marker (FF D9) lies in `bytes`. Searched from the end, where an intact file
// has it.
bool HasEoi(absl::Span<const uint8_t> bytes);

// Cuts `jpeg` to the intervals covering `region` of the image decoded at 1/denominator scale,
// into *cut. Returns false (and *cut's jpeg is meaningless) when the file cannot be cut as the
// header says, or when the cut would hold the whole width from the top row (nothing saved:
// decode_jpeg_region.h already stops below the window).
// REQUIRES: denominator is 1, 2, 4 or 8; region lies inside the image at that scale.
bool CutToRestartIntervals(absl::Span<const uint8_t> jpeg, const PixelRect& region,
                           uint32_t denominator, RestartCut* cut);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_JPEG_RESTART_WINDOW_H_
