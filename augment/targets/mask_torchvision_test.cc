// Masks moved by MoveTargets equal torchvision 0.14's functional ops on tensors with NEAREST
// interpolation, bit for bit (what torchvision.transforms.v2 runs on a Mask). The expected
// masks come from testdata/make_torchvision_masks.py (Debian's python3-torchvision), whose case
// list this file follows. An instance mask fills with 0 (v2's default), a semantic mask with 255
// (kSemanticMaskFill), each matching torchvision called with that fill.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "augment/kernels/warp.h"
#include "augment/targets/move_targets.h"
#include "augment/testing/fixture_files.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

constexpr uint32_t kMaskHeight = 37;
constexpr uint32_t kMaskWidth = 53;

std::vector<uint8_t> TorchvisionMask(const std::string& name) {
  return ReadFixtureFile(std::string(STOKER_TARGETS_TESTDATA_DIR) + "/torchvision/" + name +
                         ".bin");
}

// The coefficients of the fixture's perspective case (start and end corners as the script's).
std::array<double, 8> FixtureCoefficients() {
  const double w = kMaskWidth - 1.0, h = kMaskHeight - 1.0;
  const std::array<double, 8> start = {0, 0, w, 0, w, h, 0, h};
  const std::array<double, 8> end = {3, 2, w - 4, 4, w - 1, h - 5, 6, h};
  std::array<double, 8> coefficients{};
  EXPECT_TRUE(PerspectiveCoefficients(start, end, &coefficients));
  return coefficients;
}

enum class MaskKind { kInstance, kSemantic };

// The fixture's input as a one-mask target of `kind`, moved by `move`; returns the moved pixels.
std::vector<uint8_t> Moved(const TargetMove& move, MaskKind kind = MaskKind::kInstance) {
  SampleTargets targets;
  targets.canvas_height = kMaskHeight;
  targets.canvas_width = kMaskWidth;
  std::optional<TargetMasks>& mask =
      kind == MaskKind::kInstance ? targets.masks : targets.semantic_mask;
  mask = TargetMasks{1, kMaskHeight, kMaskWidth, TorchvisionMask("input")};
  EXPECT_EQ(mask->pixels.size(), size_t{kMaskHeight} * kMaskWidth);
  const absl::Status status = MoveTargets({move}, &targets);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(mask->height, move.out_height);
  EXPECT_EQ(mask->width, move.out_width);
  return mask->pixels;
}

// Every op moves a semantic mask as an instance mask, but for the fill.
TEST(MaskTorchvisionTest, SemanticMaskMovesAsAnInstanceMask) {
  const Padding padding{3, 5, 7, 2};
  for (const TargetMove& move :
       {ResizeMove(kMaskHeight, kMaskWidth, 23, 71),
        CropMove(kMaskHeight, kMaskWidth, 4, 6, 20, 30), FlipMove(true, kMaskHeight, kMaskWidth),
        FlipMove(false, kMaskHeight, kMaskWidth),
        PadMove(kMaskHeight, kMaskWidth, padding, PadMode::kReflect)}) {
    EXPECT_EQ(Moved(move, MaskKind::kSemantic), Moved(move));
  }
}

// Where pixels come from outside the image, a semantic mask is 255: torchvision with fill=255.
TEST(MaskTorchvisionTest, SemanticMaskFillsWith255) {
  EXPECT_EQ(Moved(PadMove(kMaskHeight, kMaskWidth, Padding{3, 5, 7, 2}, PadMode::kConstant),
                  MaskKind::kSemantic),
            TorchvisionMask("pad_constant_fill255"));
  EXPECT_EQ(
      Moved(AffineMove(kMaskHeight, kMaskWidth, InverseAffineMatrix(30.0, 5, -3, 1.2, 10.0, 5.0)),
            MaskKind::kSemantic),
      TorchvisionMask("affine_fill255"));
  EXPECT_EQ(Moved(AffineMove(kMaskHeight, kMaskWidth, InverseAffineMatrix(-25.0, 0, 0, 1, 0, 0)),
                  MaskKind::kSemantic),
            TorchvisionMask("rotate_25_fill255"));
  EXPECT_EQ(
      Moved(PerspectiveMove(kMaskHeight, kMaskWidth, FixtureCoefficients()), MaskKind::kSemantic),
      TorchvisionMask("perspective_fill255"));
}

TEST(MaskTorchvisionTest, ResizeIsTorchNearest) {
  for (const auto& [h, w] :
       std::vector<std::pair<uint32_t, uint32_t>>{{23, 71}, {74, 106}, {50, 40}, {16, 16}}) {
    const std::string name = "resize_" + std::to_string(h) + "x" + std::to_string(w);
    EXPECT_EQ(Moved(ResizeMove(kMaskHeight, kMaskWidth, h, w)), TorchvisionMask(name)) << name;
  }
}

TEST(MaskTorchvisionTest, CropAndFlips) {
  EXPECT_EQ(Moved(CropMove(kMaskHeight, kMaskWidth, 4, 6, 20, 30)),
            TorchvisionMask("crop_4_6_20x30"));
  EXPECT_EQ(Moved(FlipMove(true, kMaskHeight, kMaskWidth)), TorchvisionMask("hflip"));
  EXPECT_EQ(Moved(FlipMove(false, kMaskHeight, kMaskWidth)), TorchvisionMask("vflip"));
}

TEST(MaskTorchvisionTest, PadInEveryMode) {
  const Padding padding{3, 5, 7, 2};
  EXPECT_EQ(Moved(PadMove(kMaskHeight, kMaskWidth, padding, PadMode::kConstant)),
            TorchvisionMask("pad_constant"));
  EXPECT_EQ(Moved(PadMove(kMaskHeight, kMaskWidth, padding, PadMode::kEdge)),
            TorchvisionMask("pad_edge"));
  EXPECT_EQ(Moved(PadMove(kMaskHeight, kMaskWidth, padding, PadMode::kReflect)),
            TorchvisionMask("pad_reflect"));
  EXPECT_EQ(Moved(PadMove(kMaskHeight, kMaskWidth, padding, PadMode::kSymmetric)),
            TorchvisionMask("pad_symmetric"));
}

TEST(MaskTorchvisionTest, AffineAndRotation) {
  EXPECT_EQ(
      Moved(AffineMove(kMaskHeight, kMaskWidth, InverseAffineMatrix(30.0, 5, -3, 1.2, 10.0, 5.0))),
      TorchvisionMask("affine"));
  // F.rotate(a) is affine(angle=-a), as random_rotation warps.
  EXPECT_EQ(Moved(AffineMove(kMaskHeight, kMaskWidth, InverseAffineMatrix(-25.0, 0, 0, 1, 0, 0))),
            TorchvisionMask("rotate_25"));
}

TEST(MaskTorchvisionTest, Perspective) {
  EXPECT_EQ(Moved(PerspectiveMove(kMaskHeight, kMaskWidth, FixtureCoefficients())),
            TorchvisionMask("perspective"));
}

}  // namespace
}  // namespace stoker
