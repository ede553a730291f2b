#include "augment/targets/target_oracle.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

namespace stoker {
namespace {

// Bounding box of the pixels (y, x) of a height × width grid where inside(y, x).
template <typename Inside>
std::optional<std::array<float, 4>> BoundingBox(uint32_t height, uint32_t width, Inside inside) {
  uint32_t x1 = width, y1 = height, x2 = 0, y2 = 0;
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      if (!inside(y, x)) continue;
      x1 = std::min(x1, x);
      y1 = std::min(y1, y);
      x2 = std::max(x2, x + 1);
      y2 = std::max(y2, y + 1);
    }
  }
  if (x2 == 0) return std::nullopt;
  return std::array<float, 4>{static_cast<float>(x1), static_cast<float>(y1),
                              static_cast<float>(x2), static_cast<float>(y2)};
}

}  // namespace

OracleScene PaintedScene(std::vector<uint8_t> pixels, const ImageShape& shape,
                         const std::vector<std::array<uint32_t, 4>>& boxes) {
  OracleScene scene;
  scene.shape = shape;
  scene.targets.canvas_height = shape.height;
  scene.targets.canvas_width = shape.width;
  scene.targets.boxes.emplace();
  scene.targets.box_labels.emplace();
  TargetMasks masks{static_cast<uint32_t>(boxes.size()), shape.height, shape.width, false, {}};
  masks.pixels.assign(size_t{masks.count} * shape.height * shape.width, 0);
  TargetKeypoints keypoints{static_cast<uint32_t>(boxes.size()), 1, {}, {}};
  for (size_t i = 0; i < boxes.size(); ++i) {
    const auto [x1, y1, x2, y2] = boxes[i];
    const int channel = static_cast<int>(i);
    scene.channel_of.push_back(channel);
    for (uint32_t y = 0; y < shape.height; ++y) {
      for (uint32_t x = 0; x < shape.width; ++x) {
        const bool inside = x >= x1 && x < x2 && y >= y1 && y < y2;
        pixels[(size_t{y} * shape.width + x) * shape.channels + channel] = inside ? 255 : 0;
        masks.pixels[(i * shape.height + y) * shape.width + x] = inside ? 1 : 0;
      }
    }
    for (const uint32_t v : boxes[i]) scene.targets.boxes->push_back(static_cast<float>(v));
    scene.targets.box_labels->push_back(static_cast<int64_t>(10 + i));
    keypoints.xy.push_back((x1 + x2) / 2.0f);
    keypoints.xy.push_back((y1 + y2) / 2.0f);
    keypoints.visibility.push_back(2);
  }
  scene.targets.masks = std::move(masks);
  scene.targets.keypoints = std::move(keypoints);
  scene.pixels = std::move(pixels);
  return scene;
}

std::optional<std::array<float, 4>> PlaneBox(const ImageView& image, int channel) {
  const auto* p = image.pixels<const uint8_t>();
  const ImageShape& s = image.shape;
  return BoundingBox(s.height, s.width, [&](uint32_t y, uint32_t x) {
    return p[(size_t{y} * s.width + x) * s.channels + channel] >= 128;
  });
}

std::optional<std::array<float, 4>> MaskBox(const TargetMasks& masks, uint32_t index) {
  const uint8_t* p = masks.pixels.data() + size_t{index} * masks.height * masks.width;
  return BoundingBox(masks.height, masks.width,
                     [&](uint32_t y, uint32_t x) { return p[size_t{y} * masks.width + x] != 0; });
}

}  // namespace stoker
