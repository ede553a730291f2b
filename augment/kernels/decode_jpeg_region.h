#ifndef STOKER_AUGMENT_KERNELS_DECODE_JPEG_REGION_H_
#define STOKER_AUGMENT_KERNELS_DECODE_JPEG_REGION_H_

// Decoding one window of a JPEG, for the fused decode-and-crop of augment/pipeline.h, through
// libjpeg's own API (the jpeglib.h of libjpeg-turbo 2.1; TurboJPEG 2.1 cannot crop):
//
//   - rows above the window are skipped with jpeg_skip_scanlines (entropy-decoded, since a
//     sequential JPEG cannot be entered in the middle, but not transformed or upsampled);
//   - columns outside it are left out with jpeg_crop_scanline, which aligns the span's left end
//     down to an iMCU boundary; the caller gets the span and the window's place in it (ops read
//     a window of their input, so nothing is copied);
//   - a file with restart markers that every MCU row holds whole (stoker-pack
//     --restart-markers) is first cut down to the intervals the window needs
//     (jpeg_restart_window.h), so neither the rows above nor the columns beside the window
//     are entropy-decoded;
//   - rows below are left undecoded when an EOI marker lies ahead of the decoder (an intact
//     file), since no read can then run past the file's end; otherwise the scan is still
//     entropy-decoded to its end. Either way a truncated file is refused exactly when
//     ImageDecoder::Decode refuses it (its first warning is "Premature end of JPEG file"),
//     whatever part of the image the window covers; like tjDecompress2, the markers after the
//     scan are not read (no jpeg_finish_decompress).
//
// The pixels equal, byte for byte, those ImageDecoder::Decode produces at the same scale and then
// cut to the window (decode_jpeg_region_test.cc checks it on photographs, every subsampling,
// baseline and progressive, windows touching each edge): the decompressor is set up as
// TurboJPEG's tjDecompress2 sets it (same output color space, islow IDCT, fancy upsampling,
// block smoothing, the 500-scan limit), and the decoded span reaches past the window on both
// sides, because jpeg_crop_scanline treats the span's ends as image edges: fancy upsampling would
// replicate the span's last chroma sample there (two chroma samples of margin cover it), and a
// progressive file whose later scans are missing is block-smoothed from the DC values of blocks
// up to two columns away (three iMCU columns of margin for progressive files). Without the
// margins, windows differ from the whole decode at their left and right edges.
// CMYK and YCCK files are read as CMYK and converted as decode.h says (InvertedCmykToRgb).

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "augment/kernels/decode.h"
#include "augment/kernels/jpeg_restart_window.h"
#include "image/image.h"

namespace stoker {

struct JpegSession;  // The libjpeg objects (decode_jpeg_region.cc; jpeglib.h stays out of here).

// Holds a libjpeg decompressor, created on first use and reused. Thread-compatible.
class JpegRegionDecoder {
 public:
  JpegRegionDecoder();
  ~JpegRegionDecoder();
  JpegRegionDecoder(const JpegRegionDecoder&) = delete;
  JpegRegionDecoder& operator=(const JpegRegionDecoder&) = delete;

  // Decodes `region` of the JPEG `bytes`, whose header is `header`, as decoded at
  // 1/denominator scale: *out is Reshaped to the region's rows of a span of whole columns that
  // contains the region (its margins included, so no copy is needed), and *window is set to
  // the region's place in *out. Cut to *window, the pixels equal the whole decode's.
  // REQUIRES: header.format is kJpeg; denominator is 1, 2, 4 or 8; region is non-empty and lies
  //   inside ScaledSize(header, denominator); channels is 1 or 3.
  // Errors: kDecodeError bad-sample errors (common/bad_sample.h); INTERNAL when libjpeg cannot
  //   be set up.
  absl::Status Decode(absl::Span<const uint8_t> bytes, const EncodedHeader& header,
                      const PixelRect& region, uint32_t denominator, uint32_t channels,
                      ImageBuffer* out, PixelRect* window);

 private:
  std::unique_ptr<JpegSession> session_;
  std::vector<uint8_t> row_;  // One decoded row: CMYK rows, and the rows below the region.
  RestartCut cut_;            // The window's restart intervals, when the file has them.
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_DECODE_JPEG_REGION_H_
