// The decoder against PIL: for each fixture of testdata/pil (written by make_pil_fixtures.py from
// a real photograph), ImageDecoder's RGB equals what PIL's Image.open(...).convert("RGB") made of
// the same bytes, byte for byte: CMYK and YCCK JPEGs (with and without Adobe's marker), 16-bit,
// palette, 1-bit, gray+alpha and RGBA PNGs, WebP with alpha.

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "augment/kernels/decode.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

std::vector<uint8_t> ReadFile(const std::string& name) {
  std::ifstream in(std::string(STOKER_PIL_FIXTURES_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

class DecodeLikePilTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DecodeLikePilTest, RgbEqualsPilConvertRgb) {
  const std::string name = GetParam();
  const std::vector<uint8_t> encoded = ReadFile(name);
  const std::vector<uint8_t> expected = ReadFile(name.substr(0, name.rfind('.')) + ".rgb");
  ImageDecoder decoder;
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(encoded, DecodeLimits{1 << 20, 100});
  ASSERT_TRUE(header.ok()) << header.status();
  const ImageShape shape = ScaledSize(*header, 1, 3);
  ASSERT_EQ(shape.elements(), expected.size());
  std::vector<uint8_t> pixels(shape.elements());
  ASSERT_TRUE(decoder.Decode(encoded, ImageView{pixels.data(), shape}).ok());
  int differing = 0;
  for (size_t i = 0; i < pixels.size(); ++i) differing += pixels[i] != expected[i];
  EXPECT_EQ(differing, 0) << name << ": bytes differing from PIL's";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeLikePilTest,
                         ::testing::Values("ycbcr.jpg", "cmyk_adobe.jpg", "cmyk_no_adobe.jpg",
                                           "ycck.jpg", "rgb16.png", "gray16.png", "rgba16.png",
                                           "palette.png", "palette4.png", "gray1.png",
                                           "gray_alpha.png", "rgba.png", "rgba_lossy.webp",
                                           "rgba_lossless.webp"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = (c == '.') ? '_' : c;
                           return name;
                         });

TEST(DecodeLikePilTest, FourChannelJpegsAreSeenAsCmyk) {
  for (const char* name : {"cmyk_adobe.jpg", "cmyk_no_adobe.jpg", "ycck.jpg"}) {
    ImageDecoder decoder;
    absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(ReadFile(name), {1 << 20, 100});
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_TRUE(header->cmyk) << name;
  }
}

// Gray from CMYK: PIL's "L" weights on the RGB above.
TEST(DecodeLikePilTest, CmykToGrayUsesPilLuma) {
  const std::vector<uint8_t> encoded = ReadFile("cmyk_adobe.jpg");
  const std::vector<uint8_t> rgb = ReadFile("cmyk_adobe.rgb");
  ImageDecoder decoder;
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(encoded, {1 << 20, 100});
  ASSERT_TRUE(header.ok());
  const ImageShape shape = ScaledSize(*header, 1, 1);
  std::vector<uint8_t> gray(shape.elements());
  ASSERT_TRUE(decoder.Decode(encoded, ImageView{gray.data(), shape}).ok());
  for (size_t i = 0; i < gray.size(); ++i) {
    const int luma =
        (rgb[3 * i] * 19595 + rgb[3 * i + 1] * 38470 + rgb[3 * i + 2] * 7471 + 0x8000) >> 16;
    ASSERT_EQ(gray[i], luma) << "pixel " << i;
  }
}

}  // namespace
}  // namespace stoker
