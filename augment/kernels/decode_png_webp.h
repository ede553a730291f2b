#ifndef STOKER_AUGMENT_KERNELS_DECODE_PNG_WEBP_H_
#define STOKER_AUGMENT_KERNELS_DECODE_PNG_WEBP_H_

// PNG (libpng) and WebP (libwebp) decoding for ImageDecoder (decode.h), straight into the
// caller's pixels, converted as PIL's Image.convert("RGB") does (the conversions OpenCV's
// imdecode made before, but for 16-bit gray): 16-bit samples keep their high byte, except
// 16-bit gray without alpha, which PIL opens as mode "I" and clips to 255; palettes and low bit
// depths expand to 8 bits, alpha (and tRNS) is dropped, never composited, gray becomes RGB by
// copying; a color image asked for as gray uses 0.299 r + 0.587 g + 0.114 b (libpng's
// rgb_to_gray for PNG, identical to before; for WebP the 14-bit fixed-point formula of OpenCV's
// BGR2GRAY, whose vectorized code rounds some pixels one level differently).

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "image/image.h"

namespace stoker {

// REQUIRES: out is uint8 HWC with 1 or 3 channels and the image's height and width.
// `scratch` holds the 16-bit samples of a 16-bit gray PNG (reused across calls).
// Errors: kDecodeError bad-sample errors (common/bad_sample.h) naming the library.
absl::Status DecodePng(absl::Span<const uint8_t> bytes, const ImageView& out,
                       std::vector<uint8_t>* scratch);

// A label map (a semantic segmentation mask, e.g. ADE20K's, Cityscapes' or VOC's PNGs) into `out`,
// each pixel's value as PIL reads it into np.array: 8-bit gray as it is, a palette's index (not
// its colour; any bit depth). Other PNGs are refused, not converted: 16-bit or 1/2/4-bit gray,
// colour, alpha. REQUIRES: out is 1-channel uint8.
// Errors: INVALID_ARGUMENT saying why ("not a PNG", "is 40x30, expected 64x48", "16-bit gray:
// label maps are 8-bit gray or palette", libpng's message for a corrupt file); RESOURCE_EXHAUSTED
// when libpng cannot allocate a decoder.
absl::Status DecodePngLabels(absl::Span<const uint8_t> bytes, const ImageView& out);

// `scratch` holds the RGB image when `out` is gray (reused across calls).
absl::Status DecodeWebp(absl::Span<const uint8_t> bytes, const ImageView& out,
                        std::vector<uint8_t>* scratch);

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_DECODE_PNG_WEBP_H_
