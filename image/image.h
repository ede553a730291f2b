#ifndef STOKER_IMAGE_IMAGE_H_
#define STOKER_IMAGE_IMAGE_H_

// Images as the kernels see them: dense HWC pixels of uint8 or float32, plus a reusable buffer
// that owns such pixels and never shrinks (so steady-state processing does not allocate or
// page-fault).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace stoker {

enum class PixelType { kUint8, kFloat32 };

inline size_t PixelTypeSize(PixelType type) { return type == PixelType::kUint8 ? 1 : 4; }
const char* PixelTypeName(PixelType type);

// Geometry and element type of an image. Pixels are HWC, rows dense (stride = width * channels).
struct ImageShape {
  uint32_t height = 0;
  uint32_t width = 0;
  uint32_t channels = 0;
  PixelType type = PixelType::kUint8;

  size_t elements() const { return size_t{height} * width * channels; }
  size_t bytes() const { return elements() * PixelTypeSize(type); }
  bool operator==(const ImageShape& o) const {
    return height == o.height && width == o.width && channels == o.channels && type == o.type;
  }
  bool operator!=(const ImageShape& o) const { return !(*this == o); }
};

// "HxWxC type" (e.g. "224x224x3 uint8"), for messages.
std::string ImageShapeText(const ImageShape& shape);

// A window of an image, in pixels.
struct PixelRect {
  uint32_t top = 0;
  uint32_t left = 0;
  uint32_t height = 0;
  uint32_t width = 0;
};

// Non-owning view. Thread-compatible.
struct ImageView {
  void* data = nullptr;
  ImageShape shape;

  template <typename T>
  T* pixels() const {
    return static_cast<T*>(data);
  }
};

// Owns pixel storage, 64-byte aligned. Reshape() keeps the allocation when it is large enough.
// Thread-compatible.
class ImageBuffer {
 public:
  ImageBuffer() = default;
  ImageBuffer(const ImageBuffer&) = delete;
  ImageBuffer& operator=(const ImageBuffer&) = delete;
  ImageBuffer(ImageBuffer&&) = default;
  ImageBuffer& operator=(ImageBuffer&&) = default;

  // Sets the shape; grows the storage if needed. Pixel contents are unspecified afterwards.
  void Reshape(const ImageShape& shape);
  ImageView view() const { return ImageView{storage_.get(), shape_}; }
  const ImageShape& shape() const { return shape_; }
  size_t capacity_bytes() const { return capacity_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeDeleter> storage_;
  size_t capacity_ = 0;
  ImageShape shape_;
};

}  // namespace stoker

#endif  // STOKER_IMAGE_IMAGE_H_
