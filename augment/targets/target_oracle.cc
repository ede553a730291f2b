#include "augment/targets/target_oracle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "augment/kernels/decode.h"
#include "augment/testing/fixture_files.h"
#include "gtest/gtest.h"

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

void ExpectNear(const std::array<float, 4>& box, const std::array<float, 4>& pixels,
                float tolerance, const std::string& what) {
  for (int k = 0; k < 4; ++k) {
    EXPECT_LE(std::fabs(box[k] - pixels[k]), tolerance)
        << what << " coordinate " << k << ": box " << box[k] << ", pixels " << pixels[k];
  }
}

// The semantic mask went where the instance masks went, each of its pixels the label of the last
// box whose mask holds it (as PaintedScene painted them), 0 where none does; only pixels the ops
// brought in from outside the image may be kSemanticMaskFill instead of 0. Instance masks are
// checked against the painted image, so this checks the semantic mask against it too.
void ExpectSemanticMaskFollowsInstanceMasks(const SampleTargets& moved, const std::string& what) {
  ASSERT_TRUE(moved.semantic_mask.has_value()) << what;
  const TargetMasks& semantic = *moved.semantic_mask;
  ASSERT_EQ(semantic.height, moved.canvas_height) << what;
  ASSERT_EQ(semantic.width, moved.canvas_width) << what;
  const size_t area = size_t{semantic.height} * semantic.width;
  size_t differing = 0;
  for (size_t j = 0; j < area; ++j) {
    uint8_t label = 0;
    for (uint32_t i = 0; i < moved.masks->count; ++i) {
      if (moved.masks->pixels[i * area + j] != 0) label = static_cast<uint8_t>(i + 1);
    }
    const uint8_t got = semantic.pixels[j];
    differing += !(got == label || (label == 0 && got == kSemanticMaskFill));
  }
  EXPECT_EQ(differing, 0u) << what << ", semantic mask";
}

}  // namespace

OracleScene PaintedScene(std::vector<uint8_t> pixels, const ImageShape& shape,
                         const std::vector<std::array<uint32_t, 4>>& boxes, int first_channel) {
  OracleScene scene;
  scene.shape = shape;
  scene.targets.canvas_height = shape.height;
  scene.targets.canvas_width = shape.width;
  scene.targets.boxes.emplace();
  scene.targets.box_labels.emplace();
  TargetMasks masks{static_cast<uint32_t>(boxes.size()), shape.height, shape.width, {}};
  masks.pixels.assign(size_t{masks.count} * shape.height * shape.width, 0);
  TargetMasks semantic{1, shape.height, shape.width, {}};
  semantic.pixels.assign(size_t{shape.height} * shape.width, 0);
  TargetKeypoints keypoints{static_cast<uint32_t>(boxes.size()), 1, {}, {}};
  for (size_t i = 0; i < boxes.size(); ++i) {
    const auto [x1, y1, x2, y2] = boxes[i];
    const int channel = first_channel + static_cast<int>(i);
    scene.channel_of.push_back(channel);
    for (uint32_t y = 0; y < shape.height; ++y) {
      for (uint32_t x = 0; x < shape.width; ++x) {
        const bool inside = x >= x1 && x < x2 && y >= y1 && y < y2;
        pixels[(size_t{y} * shape.width + x) * shape.channels + channel] = inside ? 255 : 0;
        masks.pixels[(i * shape.height + y) * shape.width + x] = inside ? 1 : 0;
        if (inside) semantic.pixels[size_t{y} * shape.width + x] = static_cast<uint8_t>(i + 1);
      }
    }
    for (const uint32_t v : boxes[i]) scene.targets.boxes->push_back(static_cast<float>(v));
    scene.targets.box_labels->push_back(static_cast<int64_t>(10 + i));
    keypoints.xy.push_back((x1 + x2) / 2.0f);
    keypoints.xy.push_back((y1 + y2) / 2.0f);
    keypoints.visibility.push_back(2);
  }
  scene.targets.masks = std::move(masks);
  scene.targets.semantic_mask = std::move(semantic);
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

OracleScene PaintedPhoto(const std::string& path, const std::array<uint32_t, 4>& box) {
  const std::vector<uint8_t> bytes = ReadFixtureFile(path);
  ImageDecoder decoder;
  const absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(bytes, {50'000'000, 100});
  EXPECT_TRUE(header.ok()) << header.status();
  if (!header.ok()) return OracleScene{};
  const ImageShape shape = ScaledSize(*header, 1, 3);
  std::vector<uint8_t> pixels(shape.elements());
  EXPECT_TRUE(decoder.Decode(bytes, ImageView{pixels.data(), shape}).ok());
  return PaintedScene(std::move(pixels), shape, {box}, /*first_channel=*/1);
}

// Checks one sample's moved targets against the image the pipeline made of the scene.
void ExpectTargetsFollowImage(const OracleScene& scene, const SampleTargets& moved,
                              const ImageView& image, const OracleTolerance& tolerance,
                              const std::string& what) {
  ASSERT_EQ(moved.canvas_height, image.shape.height) << what;
  ASSERT_EQ(moved.canvas_width, image.shape.width) << what;
  ASSERT_EQ(moved.box_count(), scene.channel_of.size()) << what;
  for (size_t i = 0; i < moved.box_count(); ++i) {
    const std::string name = what + ", box " + std::to_string(i);
    const std::array<float, 4> box = {(*moved.boxes)[i * 4], (*moved.boxes)[i * 4 + 1],
                                      (*moved.boxes)[i * 4 + 2], (*moved.boxes)[i * 4 + 3]};
    const std::optional<std::array<float, 4>> pixels = PlaneBox(image, scene.channel_of[i]);
    const std::optional<std::array<float, 4>> mask = MaskBox(*moved.masks, i);
    if (!pixels.has_value()) {
      // Cropped or warped out: the clamped box is (nearly) empty.
      EXPECT_TRUE(box[2] - box[0] <= tolerance.pixels + 1 ||
                  box[3] - box[1] <= tolerance.pixels + 1)
          << name << " kept a box for pixels that left the image";
      continue;
    }
    ExpectNear(box, *pixels, tolerance.pixels, name);
    if (tolerance.contains_mask) {
      EXPECT_LE(box[0], (*pixels)[0] + 0.5f) << name;
      EXPECT_LE(box[1], (*pixels)[1] + 0.5f) << name;
      EXPECT_GE(box[2], (*pixels)[2] - 0.5f) << name;
      EXPECT_GE(box[3], (*pixels)[3] - 0.5f) << name;
    }
    ASSERT_TRUE(mask.has_value()) << name;
    ExpectNear(*mask, *pixels, tolerance.masks_exact ? 0 : std::max(1.0f, tolerance.pixels),
               name + " mask");
    // Keypoints are not clamped (v2): one that stays on the canvas stays in its box.
    const float kx = moved.keypoints->xy[i * 2], ky = moved.keypoints->xy[i * 2 + 1];
    if (kx >= 0 && kx < image.shape.width && ky >= 0 && ky < image.shape.height) {
      EXPECT_TRUE(kx >= box[0] - 1 && kx <= box[2] + 1 && ky >= box[1] - 1 && ky <= box[3] + 1)
          << name << " keypoint (" << kx << ", " << ky << ") left its box";
    }
  }
  ExpectSemanticMaskFollowsInstanceMasks(moved, what);
  if (tolerance.masks_exact) {
    for (size_t i = 0; i < moved.box_count(); ++i) {
      const uint8_t* mask = moved.masks->pixels.data() + i * image.shape.height * image.shape.width;
      const auto* p = image.pixels<const uint8_t>();
      size_t differing = 0;
      for (size_t j = 0; j < size_t{image.shape.height} * image.shape.width; ++j) {
        differing += (mask[j] != 0) != (p[j * 3 + scene.channel_of[i]] >= 128);
      }
      EXPECT_EQ(differing, 0u) << what << ", mask " << i;
    }
  }
}

}  // namespace stoker
