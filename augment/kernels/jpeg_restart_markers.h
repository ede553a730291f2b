#ifndef STOKER_AUGMENT_KERNELS_JPEG_RESTART_MARKERS_H_
#define STOKER_AUGMENT_KERNELS_JPEG_RESTART_MARKERS_H_

// Lossless rewriting of a JPEG with restart markers (what `jpegtran -restart` does), for
// stoker-pack --restart-markers: each restart interval entropy-decodes on its own (the DC
// predictors reset), so a worker decoding a crop can decode only the intervals the crop needs
// instead of every row above it and every column beside it. The DCT coefficients are copied
// unchanged (libjpeg's jpeg_read_coefficients / jpeg_write_coefficients), so every decoder
// produces the same pixels from the output as from the input.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "augment/kernels/decode.h"

namespace stoker {

// The restart interval chosen for an image MCUs wide: the largest divisor of
// mcus_per_row whose width (divisor * mcu_width pixels) is at most kRestartIntervalPixels (64),
// at least 1. A divisor, so that every MCU row holds whole intervals and a decoder can take
// a column range of intervals.
inline constexpr uint32_t kRestartIntervalPixels = 64;
uint32_t RestartIntervalMcus(uint32_t mcus_per_row, uint32_t mcu_width);

// Rewrites `jpeg` losslessly (the same DCT coefficients, so decoders produce the same pixels)
// as a baseline sequential Huffman JPEG (progressive and arithmetic-coded inputs become
// sequential) with optimized Huffman tables and a restart marker every RestartIntervalMcus(...)
// MCUs, the MCU being 8 * the largest horizontal sampling factor pixels wide (8 for one
// component). APPn and COM markers are kept (not the JFIF APP0 / Adobe APP14 libjpeg writes
// itself), so EXIF orientation and ICC profiles survive.
//
// Memory is bounded by `limits` (the decode gates' defaults unless told): images over
// limits.max_pixels and files with more than limits.max_jpeg_scans scans are refused before
// their coefficients are held, and files of more than 4 components too (no worker decodes
// them), so it holds at most 2 bytes per sample, 8 bytes per pixel (400 MB at the default 50
// megapixels), plus the output.
// Errors: INVALID_ARGUMENT starting with "jpeg: ", naming libjpeg's message, when the bytes are not
// a JPEG libjpeg reads, end early (so a file a worker refuses is never turned into one it
// accepts), or are over the limits.
absl::StatusOr<std::vector<uint8_t>> AddJpegRestartMarkers(
    absl::Span<const uint8_t> jpeg,
    const DecodeLimits& limits = DecodeLimits{kDecodeDefaultMaxPixels, kDecodeDefaultMaxScans});

}  // namespace stoker

#endif  // STOKER_AUGMENT_KERNELS_JPEG_RESTART_MARKERS_H_
