#ifndef STOKER_IMAGE_SAMPLE_INPUT_H_
#define STOKER_IMAGE_SAMPLE_INPUT_H_

// What a pipeline receives for one sample: a decoded image (synthetic sources), or the encoded
// bytes of one (a JPEG, PNG or WebP file read from a shard) that the pipeline's first op, decode,
// turns into an image.

#include <cstdint>

#include "absl/types/span.h"
#include "image/image.h"

namespace stoker {

// The kind of input a pipeline is compiled for. Thread-compatible value type.
struct InputFormat {
  // True: every sample arrives as encoded bytes; its shape is known only after decoding.
  bool encoded = false;
  // Decoded inputs only: the shape of every image.
  ImageShape shape;

  static InputFormat Decoded(const ImageShape& shape) { return InputFormat{false, shape}; }
  static InputFormat Encoded() { return InputFormat{true, ImageShape{}}; }
};

// One sample's input; non-owning. `image` is set for decoded inputs, `encoded` for encoded ones.
struct SampleInput {
  ImageView image;
  absl::Span<const uint8_t> encoded;

  static SampleInput Decoded(const ImageView& image) { return SampleInput{image, {}}; }
  static SampleInput Encoded(absl::Span<const uint8_t> bytes) { return SampleInput{{}, bytes}; }
};

}  // namespace stoker

#endif  // STOKER_IMAGE_SAMPLE_INPUT_H_
