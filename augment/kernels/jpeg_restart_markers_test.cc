#include "augment/kernels/jpeg_restart_markers.h"

#include <cstdint>
#include <string>
#include <vector>

#include "augment/kernels/decode.h"
#include "augment/synthetic_images.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr uint8_t kDri = 0xDD;
constexpr uint8_t kApp0 = 0xE0;
constexpr uint8_t kApp1 = 0xE1;
constexpr uint8_t kSos = 0xDA;

struct Segment {
  uint8_t marker = 0;
  std::vector<uint8_t> payload;
};

// The marker segments before the first scan's data (SOS included).
std::vector<Segment> SegmentsOf(const std::vector<uint8_t>& jpeg) {
  std::vector<Segment> segments;
  for (size_t at = 2; at + 4 <= jpeg.size() && jpeg[at] == 0xFF;) {
    const size_t length = size_t{jpeg[at + 2]} << 8 | jpeg[at + 3];
    if (length < 2 || at + 2 + length > jpeg.size()) break;
    segments.push_back(Segment{
        jpeg[at + 1], std::vector<uint8_t>(jpeg.begin() + at + 4, jpeg.begin() + at + 2 + length)});
    if (jpeg[at + 1] == kSos) break;
    at += 2 + length;
  }
  return segments;
}

const Segment* Find(const std::vector<Segment>& segments, uint8_t marker) {
  for (const Segment& segment : segments) {
    if (segment.marker == marker) return &segment;
  }
  return nullptr;
}

bool IsProgressiveSof(uint8_t marker) { return marker == 0xC2 || marker == 0xC6 || marker == 0xCA; }

// An EXIF-like APP1 segment inserted after SOI.
std::vector<uint8_t> WithApp1(const std::vector<uint8_t>& jpeg, const std::string& text) {
  const size_t length = 2 + text.size();
  std::string out(jpeg.begin(), jpeg.begin() + 2);
  out += {'\xFF', static_cast<char>(kApp1), static_cast<char>(length >> 8),
          static_cast<char>(length & 0xFF)};
  out += text;
  out.append(jpeg.begin() + 2, jpeg.end());
  return std::vector<uint8_t>(out.begin(), out.end());
}

std::vector<uint8_t> Decoded(const std::vector<uint8_t>& jpeg) {
  ImageDecoder decoder;
  const DecodeLimits limits{kDecodeDefaultMaxPixels, kDecodeDefaultMaxScans};
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(jpeg, limits);
  EXPECT_TRUE(header.ok()) << header.status();
  if (!header.ok()) return {};
  ImageBuffer pixels;
  pixels.Reshape(ScaledSize(*header, 1, 3));
  const absl::Status status = decoder.Decode(jpeg, pixels.view());
  EXPECT_TRUE(status.ok()) << status;
  const ImageView view = pixels.view();
  return std::vector<uint8_t>(view.pixels<uint8_t>(),
                              view.pixels<uint8_t>() + view.shape.height * view.shape.width * 3);
}

struct RewriteCase {
  const char* name;
  uint32_t height, width, channels;
  ChromaSubsampling subsampling;
  bool progressive;
  uint32_t interval;  // Expected restart interval, in MCUs.
};

class RewriteTest : public ::testing::TestWithParam<RewriteCase> {};

TEST_P(RewriteTest, SamePixelsWithRestartMarkersAndKeptApp1) {
  const RewriteCase& c = GetParam();
  const std::vector<uint8_t> image = NaturalImage(c.height, c.width, c.channels, 7);
  const ImageView view{const_cast<uint8_t*>(image.data()),
                       ImageShape{c.height, c.width, c.channels, PixelType::kUint8}};
  const std::string exif = std::string("Exif\0\0orientation-6", 20);
  const std::vector<uint8_t> input =
      WithApp1(EncodeJpeg(view, 85, c.progressive, c.subsampling), exif);

  absl::StatusOr<std::vector<uint8_t>> output = AddJpegRestartMarkers(input);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(Decoded(*output), Decoded(input));
  const std::vector<Segment> segments = SegmentsOf(*output);
  const Segment* dri = Find(segments, kDri);
  ASSERT_NE(dri, nullptr);
  ASSERT_EQ(dri->payload.size(), 2u);
  EXPECT_EQ(uint32_t{dri->payload[0]} << 8 | dri->payload[1], c.interval);
  int jfif_segments = 0;
  for (const Segment& segment : segments) {
    EXPECT_FALSE(IsProgressiveSof(segment.marker));
    jfif_segments += segment.marker == kApp0 ? 1 : 0;
  }
  EXPECT_EQ(jfif_segments, 1);  // The input's JFIF APP0 is not copied beside libjpeg's own.
  const Segment* app1 = Find(segments, kApp1);
  ASSERT_NE(app1, nullptr);
  EXPECT_EQ(std::string(app1->payload.begin(), app1->payload.end()), exif);
}

// MCUs: 16 px wide for 4:2:0 and 4:2:2, 8 for 4:4:4 and gray.
INSTANTIATE_TEST_SUITE_P(
    Encodings, RewriteTest,
    ::testing::Values(
        // 32 MCUs -> 4 (64 px).
        RewriteCase{"s420", 375, 500, 3, ChromaSubsampling::k420, false, 4},
        // ceil(333 / 16) = 21 MCUs -> 3.
        RewriteCase{"s420_odd", 177, 333, 3, ChromaSubsampling::k420, false, 3},
        RewriteCase{"s422_odd", 177, 333, 3, ChromaSubsampling::k422, false, 3},
        // ceil(333 / 8) = 42 MCUs -> 7.
        RewriteCase{"s444_odd", 177, 333, 3, ChromaSubsampling::k444, false, 7},
        RewriteCase{"gray_odd", 177, 333, 1, ChromaSubsampling::k444, false, 7},
        // 63 MCUs of 8 px -> 7.
        RewriteCase{"gray", 100, 504, 1, ChromaSubsampling::k444, false, 7},
        RewriteCase{"progressive420_odd", 177, 333, 3, ChromaSubsampling::k420, true, 3},
        RewriteCase{"progressive444", 120, 160, 3, ChromaSubsampling::k444, true, 5}),
    [](const ::testing::TestParamInfo<RewriteCase>& info) { return std::string(info.param.name); });

TEST(AddJpegRestartMarkersTest, ExifFirstStaysFirstWithoutJfif) {
  const std::vector<uint8_t> image = NaturalImage(48, 64, 3, 5);
  const std::vector<uint8_t> jfif = EncodeJpeg(
      ImageView{const_cast<uint8_t*>(image.data()), ImageShape{48, 64, 3, PixelType::kUint8}}, 90);
  const std::vector<Segment> segments = SegmentsOf(jfif);
  ASSERT_EQ(segments.front().marker, kApp0);
  std::vector<uint8_t> exif_only(jfif.begin(), jfif.begin() + 2);  // SOI, then all but the APP0.
  exif_only.insert(exif_only.end(), jfif.begin() + 6 + segments.front().payload.size(), jfif.end());
  exif_only = WithApp1(exif_only, std::string("Exif\0\0", 6));

  absl::StatusOr<std::vector<uint8_t>> output = AddJpegRestartMarkers(exif_only);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(SegmentsOf(*output).front().marker, kApp1);
  EXPECT_EQ(Find(SegmentsOf(*output), kApp0), nullptr);
  EXPECT_EQ(Decoded(*output), Decoded(exif_only));
}

TEST(RestartIntervalMcusTest, LargestDivisorAtMost64Pixels) {
  EXPECT_EQ(RestartIntervalMcus(32, 16), 4u);
  EXPECT_EQ(RestartIntervalMcus(7, 16), 1u);   // 7 is prime and 7 MCUs are 112 px.
  EXPECT_EQ(RestartIntervalMcus(7, 8), 7u);    // 56 px.
  EXPECT_EQ(RestartIntervalMcus(63, 8), 7u);   // Divisors 1, 3, 7, 9, ...: 9 is 72 px.
  EXPECT_EQ(RestartIntervalMcus(64, 8), 8u);   // Exactly 64 px.
  EXPECT_EQ(RestartIntervalMcus(21, 16), 3u);  // 3 and 7 divide 21; 7 is 112 px.
  EXPECT_EQ(RestartIntervalMcus(2, 16), 2u);   // The whole row.
  EXPECT_EQ(RestartIntervalMcus(5, 32), 1u);   // 4:1:1: 2 MCUs would fit but do not divide.
  EXPECT_EQ(RestartIntervalMcus(1, 8), 1u);
}

TEST(AddJpegRestartMarkersTest, GarbageIsInvalidArgument) {
  const std::vector<uint8_t> garbage = {'n', 'o', 't', ' ', 'a', ' ', 'j', 'p', 'e', 'g'};
  EXPECT_THAT(AddJpegRestartMarkers(garbage),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jpeg: ")));
  EXPECT_THAT(AddJpegRestartMarkers({}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jpeg: ")));
}

TEST(AddJpegRestartMarkersTest, TruncatedFileIsRefused) {
  const std::vector<uint8_t> image = NaturalImage(64, 64, 3, 3);
  std::vector<uint8_t> jpeg = EncodeJpeg(
      ImageView{const_cast<uint8_t*>(image.data()), ImageShape{64, 64, 3, PixelType::kUint8}}, 90);
  jpeg.resize(jpeg.size() / 2);
  EXPECT_THAT(AddJpegRestartMarkers(jpeg),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jpeg: Premature end")));
}

TEST(AddJpegRestartMarkersTest, LimitsAreEnforced) {
  const std::vector<uint8_t> image = NaturalImage(64, 64, 3, 3);
  const ImageView view{const_cast<uint8_t*>(image.data()),
                       ImageShape{64, 64, 3, PixelType::kUint8}};
  EXPECT_THAT(AddJpegRestartMarkers(EncodeJpeg(view, 90), DecodeLimits{4095, 100}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jpeg: 4096 pixels")));
  // libjpeg-turbo's progressive script has 10 scans for YCbCr.
  EXPECT_THAT(
      AddJpegRestartMarkers(EncodeJpeg(view, 90, /*progressive=*/true), DecodeLimits{4096, 5}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("jpeg: more than 5 scans")));
}

}  // namespace
}  // namespace stoker
