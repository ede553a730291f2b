#include "image/image.h"

#include <new>

#include "absl/strings/str_cat.h"

namespace stoker {

namespace {
constexpr std::align_val_t kAlignment{64};
}  // namespace

const char* PixelTypeName(PixelType type) {
  return type == PixelType::kUint8 ? "uint8" : "float32";
}

std::string ImageShapeText(const ImageShape& shape) {
  return absl::StrCat(shape.height, "x", shape.width, "x", shape.channels, " ",
                      PixelTypeName(shape.type));
}

void ImageBuffer::FreeDeleter::operator()(void* p) const { ::operator delete(p, kAlignment); }

void ImageBuffer::Reshape(const ImageShape& shape) {
  const size_t needed = shape.bytes();
  if (needed > capacity_) {
    const size_t rounded = (needed + 63) / 64 * 64;
    storage_.reset(::operator new(rounded, kAlignment));
    capacity_ = rounded;
  }
  shape_ = shape;
}

}  // namespace stoker
