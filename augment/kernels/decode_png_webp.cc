#include "augment/kernels/decode_png_webp.h"

#include <png.h>
#include <webp/decode.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

absl::Status DecodeError(const std::string& what) {
  return BadSampleError(BadSampleReason::kDecodeError, what);
}

// libpng reads from memory through this cursor; errors longjmp back to DecodePng, so the
// error handler keeps the message in the cursor first.
struct PngSource {
  const uint8_t* data;
  size_t size;
  size_t offset;
  char message[160];
};

void ReadFromMemory(png_structp png, png_bytep into, png_size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > source->size - source->offset) png_error(png, "truncated PNG data");
  std::memcpy(into, source->data + source->offset, length);
  source->offset += length;
}

void OnPngError(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof(source->message), "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}  // Benign; the image is still whole.

// A 16-bit gray PNG without alpha is PIL's mode "I", whose conversion to RGB or L clips each
// sample to 255 (instead of keeping the high byte, as for every other 16-bit PNG).
bool IsClippedGray16(png_structp png, png_infop info) {
  return png_get_bit_depth(png, info) == 16 && png_get_color_type(png, info) == PNG_COLOR_TYPE_GRAY;
}

// Sets the transforms that make libpng emit `channels` 8-bit samples per pixel (16-bit
// big-endian gray samples for IsClippedGray16); returns the number of interlace passes. Called
// between png_read_info and the rows.
int SetPngTransforms(png_structp png, png_infop info, uint32_t channels) {
  const int color_type = png_get_color_type(png, info);
  if (IsClippedGray16(png, info)) {
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    return passes;
  }
  if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
    png_set_expand_gray_1_2_4_to_8(png);
  }
  png_set_packing(png);
  png_set_strip_alpha(png);
  const bool color_in = (color_type & PNG_COLOR_MASK_COLOR) != 0;
  if (channels == 3 && !color_in) png_set_gray_to_rgb(png);
  if (channels == 1 && color_in) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return passes;
}

// Each big-endian 16-bit gray sample of `wide`, clipped to 255, into every channel of `out`.
void ClipGray16(const uint8_t* wide, const ImageView& out) {
  const size_t pixels = static_cast<size_t>(out.shape.height) * out.shape.width;
  uint8_t* dst = out.pixels<uint8_t>();
  for (size_t i = 0; i < pixels; ++i) {
    const uint8_t value = wide[2 * i] != 0 ? 255 : wide[2 * i + 1];
    for (uint32_t c = 0; c < out.shape.channels; ++c) *dst++ = value;
  }
}

// SetPngTransforms for a label map: 8-bit gray, or a palette of any depth whose indices are
// unpacked, never expanded to colours or scaled; png_error for any other PNG.
int SetLabelMapTransforms(png_structp png, png_infop info) {
  const int color_type = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth == 16) {
    png_error(png, "16-bit gray: label maps are 8-bit gray or palette");
  }
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) {
    png_error(png, "1/2/4-bit gray: label maps are 8-bit gray or palette");
  }
  if (color_type != PNG_COLOR_TYPE_GRAY && color_type != PNG_COLOR_TYPE_PALETTE) {
    png_error(png, "colour or alpha: label maps are 8-bit gray or palette");
  }
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return passes;
}

// The setjmp frame: no object with a destructor lives here (`wide` is the caller's), so longjmp
// skips nothing. `labels`: a label map (SetLabelMapTransforms), whose size may differ from out's.
bool ReadPngRows(png_structp png, png_infop info, const ImageView& out, bool labels,
                 std::vector<uint8_t>* wide) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  if (png_get_image_width(png, info) != out.shape.width ||
      png_get_image_height(png, info) != out.shape.height) {
    if (!labels) png_error(png, "decoded size differs from the header's");
    auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
    std::snprintf(source->message, sizeof(source->message), "is %ux%u, expected %ux%u",
                  png_get_image_width(png, info), png_get_image_height(png, info), out.shape.width,
                  out.shape.height);
    return false;
  }
  const bool gray16 = !labels && IsClippedGray16(png, info);
  const int passes =
      labels ? SetLabelMapTransforms(png, info) : SetPngTransforms(png, info, out.shape.channels);
  const size_t stride = static_cast<size_t>(out.shape.width) * (gray16 ? 2 : out.shape.channels);
  if (png_get_rowbytes(png, info) != stride) {
    png_error(png, "unexpected row size after transforms");
  }
  if (gray16) wide->resize(stride * out.shape.height);
  uint8_t* pixels = gray16 ? wide->data() : out.pixels<uint8_t>();
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t y = 0; y < out.shape.height; ++y) {
      png_read_row(png, pixels + y * stride, nullptr);
    }
  }
  png_read_end(png, nullptr);
  if (gray16) ClipGray16(pixels, out);
  return true;
}

// Runs ReadPngRows on `bytes`: RESOURCE_EXHAUSTED without a decoder; *ok false with `source`'s
// message when the PNG cannot be read.
absl::Status ReadPng(absl::Span<const uint8_t> bytes, const ImageView& out, bool labels,
                     std::vector<uint8_t>* scratch, PngSource* source, bool* ok) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, source, OnPngError, OnPngWarning);
  png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return absl::ResourceExhaustedError("libpng: cannot allocate a decoder");
  }
  png_set_read_fn(png, source, ReadFromMemory);
  *ok = ReadPngRows(png, info, out, labels, scratch);
  png_destroy_read_struct(&png, &info, nullptr);
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodePngLabels(absl::Span<const uint8_t> bytes, const ImageView& out) {
  if (bytes.size() < 8 || png_sig_cmp(bytes.data(), 0, 8) != 0) {
    return absl::InvalidArgumentError("not a PNG (label maps are stored losslessly, as PNG)");
  }
  PngSource source{bytes.data(), bytes.size(), 0, {}};
  bool ok = false;
  RETURN_IF_ERROR(ReadPng(bytes, out, /*labels=*/true, /*scratch=*/nullptr, &source, &ok));
  return ok ? absl::OkStatus() : absl::InvalidArgumentError(source.message);
}

absl::Status DecodePng(absl::Span<const uint8_t> bytes, const ImageView& out,
                       std::vector<uint8_t>* scratch) {
  PngSource source{bytes.data(), bytes.size(), 0, {}};
  bool ok = false;
  RETURN_IF_ERROR(ReadPng(bytes, out, /*labels=*/false, scratch, &source, &ok));
  return ok ? absl::OkStatus() : DecodeError(absl::StrCat("libpng: ", source.message));
}

absl::Status DecodeWebp(absl::Span<const uint8_t> bytes, const ImageView& out,
                        std::vector<uint8_t>* scratch) {
  const size_t pixels = static_cast<size_t>(out.shape.height) * out.shape.width;
  const bool gray = out.shape.channels == 1;
  if (gray) scratch->resize(pixels * 3);
  uint8_t* rgb = gray ? scratch->data() : out.pixels<uint8_t>();
  int width = 0, height = 0;
  if (!WebPGetInfo(bytes.data(), bytes.size(), &width, &height) ||
      static_cast<uint32_t>(width) != out.shape.width ||
      static_cast<uint32_t>(height) != out.shape.height) {
    return DecodeError("libwebp: bitstream size differs from the header's, or no bitstream");
  }
  if (WebPDecodeRGBInto(bytes.data(), bytes.size(), rgb, pixels * 3,
                        static_cast<int>(out.shape.width) * 3) == nullptr) {
    return DecodeError("libwebp could not decode the image");
  }
  if (gray) {
    // OpenCV's BGR2GRAY in fixed point (14 bits), as imdecode(IMREAD_GRAYSCALE) did.
    uint8_t* dst = out.pixels<uint8_t>();
    for (size_t i = 0; i < pixels; ++i) {
      const uint8_t* p = rgb + 3 * i;
      dst[i] = static_cast<uint8_t>((p[0] * 4899 + p[1] * 9617 + p[2] * 1868 + 8192) >> 14);
    }
  }
  return absl::OkStatus();
}

}  // namespace stoker
