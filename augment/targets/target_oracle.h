#ifndef STOKER_AUGMENT_TARGETS_TARGET_ORACLE_H_
#define STOKER_AUGMENT_TARGETS_TARGET_ORACLE_H_

// Test support: the mask oracle of issue 34. A scene's boxes are painted into the image itself,
// box i as a plane of 255 in channel channel_of[i] (0 elsewhere), and given as targets too
// (boxes, labels, instance masks rasterized from the boxes, a keypoint at each box's centre).
// After a pipeline ran, the image's painted planes are where the pixels of each box went, so
// comparing a moved box with its plane's bounding box fails whenever an op moves the image but
// not the box (a hook that reports nothing, or other draws than Apply's).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "augment/targets/targets.h"
#include "image/image.h"

namespace stoker {

struct OracleScene {
  std::vector<uint8_t> pixels;  // HWC uint8, 3 channels
  ImageShape shape;
  SampleTargets targets;
  std::vector<int> channel_of;  // box i is painted in channel channel_of[i]
};

// Paints `boxes` (integer XYXY pixels, inside the image) into `pixels` (HWC uint8, 3 channels,
// of `shape`), box i into channel first_channel + i (at most 3 boxes), and makes the targets.
OracleScene PaintedScene(std::vector<uint8_t> pixels, const ImageShape& shape,
                         const std::vector<std::array<uint32_t, 4>>& boxes, int first_channel = 0);

// The photograph at `path` (a PNG or JPEG) decoded, with `box` painted into its green channel
// (red and blue stay the photograph's).
OracleScene PaintedPhoto(const std::string& path, const std::array<uint32_t, 4>& box);
// The cat's face in skimage's chelsea.png (300 x 451).
constexpr std::array<uint32_t, 4> kChelseaFace = {140, 40, 290, 200};

// How closely a moved box must match its painted pixels' bounding box, per coordinate.
struct OracleTolerance {
  float pixels;        // 0 where v2 is exact (flips, crops, pad)
  bool masks_exact;    // the op samples nearest: moved masks == painted pixels
  bool contains_mask;  // warps: the box contains the pixels' box (within half a pixel)
};
constexpr OracleTolerance kExact{0, true, false};
constexpr OracleTolerance kResampled{1, false, false};
constexpr OracleTolerance kWarped{2, true, true};
// The perspective warp of a 3-channel image and of a 1-channel mask (the latter equal to
// torchvision's bit for bit: mask_torchvision_test) round a few boundary samples differently.
constexpr OracleTolerance kPerspective{2, false, true};

// Checks (gtest expectations) one sample's moved targets against `image`, what the pipeline
// made of `scene`: each box against its painted pixels, masks and keypoints with their boxes.
void ExpectTargetsFollowImage(const OracleScene& scene, const SampleTargets& moved,
                              const ImageView& image, const OracleTolerance& tolerance,
                              const std::string& what);

// The bounding box (XYXY, continuous) of channel `channel`'s pixels >= 128 in `image`, or
// nothing when none is.
std::optional<std::array<float, 4>> PlaneBox(const ImageView& image, int channel);

// The bounding box of mask `index` of `masks` (nonzero pixels), or nothing when empty.
std::optional<std::array<float, 4>> MaskBox(const TargetMasks& masks, uint32_t index);

}  // namespace stoker

#endif  // STOKER_AUGMENT_TARGETS_TARGET_ORACLE_H_
