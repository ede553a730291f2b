#include "augment/kernels/decode.h"

#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "augment/synthetic_images.h"
#include "augment/testing/test_image_codecs.h"
#include "common/bad_sample.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opencv2/core.hpp"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr DecodeLimits kLimits{1'000'000, 100};

struct Decoded {
  absl::Status status;
  ImageShape shape;
  std::vector<uint8_t> pixels;
};

// ReadHeader, then Decode at 1/denominator scale.
Decoded DecodeBytes(const std::vector<uint8_t>& bytes, uint32_t channels,
                    const DecodeLimits& limits = kLimits, uint32_t denominator = 1) {
  ImageDecoder decoder;
  Decoded result;
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(bytes, limits);
  if (!header.ok()) return Decoded{header.status(), {}, {}};
  result.shape = ScaledSize(*header, denominator, channels);
  result.pixels.resize(result.shape.elements());
  result.status = decoder.Decode(bytes, ImageView{result.pixels.data(), result.shape});
  return result;
}

void ExpectBadSample(const absl::Status& status, BadSampleReason reason, const char* text) {
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_EQ(BadSampleReasonOf(status), reason) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(text));
}

int MaxAbsDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

class DecodeTest : public ::testing::Test {
 protected:
  static constexpr ImageShape kShape{75, 100, 3, PixelType::kUint8};
  std::vector<uint8_t> pixels_ = NaturalImage(kShape.height, kShape.width, 3, 11);
  ImageView view_{pixels_.data(), kShape};
};

TEST_F(DecodeTest, JpegRgbMatchesOpenCvInRgbOrder) {
  const std::vector<uint8_t> jpeg = EncodeJpeg(view_, 90);
  Decoded decoded = DecodeBytes(jpeg, 3);
  ASSERT_TRUE(decoded.status.ok()) << decoded.status;
  EXPECT_EQ(decoded.shape, kShape);
  cv::Mat bgr = cv::imdecode(jpeg, cv::IMREAD_COLOR);
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  const std::vector<uint8_t> reference(rgb.data, rgb.data + rgb.total() * 3);
  EXPECT_LE(MaxAbsDiff(decoded.pixels, reference), 1);
  EXPECT_LE(MaxAbsDiff(decoded.pixels, pixels_), 60);  // Close to the source, lossy.
}

TEST_F(DecodeTest, JpegGrayAndDctDownscale) {
  const std::vector<uint8_t> jpeg = EncodeJpeg(view_, 90);
  Decoded gray = DecodeBytes(jpeg, 1);
  ASSERT_TRUE(gray.status.ok()) << gray.status;
  EXPECT_EQ(gray.shape, (ImageShape{75, 100, 1, PixelType::kUint8}));
  Decoded quarter = DecodeBytes(jpeg, 3, kLimits, 4);
  ASSERT_TRUE(quarter.status.ok()) << quarter.status;
  EXPECT_EQ(quarter.shape, (ImageShape{19, 25, 3, PixelType::kUint8}));
}

TEST_F(DecodeTest, PngAndWebpAreLosslessAndRgb) {
  for (const std::vector<uint8_t>& bytes : {EncodePng(view_), EncodeWebp(view_)}) {
    ASSERT_FALSE(bytes.empty());
    Decoded decoded = DecodeBytes(bytes, 3);
    ASSERT_TRUE(decoded.status.ok()) << decoded.status;
    EXPECT_EQ(decoded.shape, kShape);
    EXPECT_EQ(decoded.pixels, pixels_);
  }
}

// What OpenCV's imdecode (the decoder before libpng/libwebp) makes of `bytes`, in RGB order.
std::vector<uint8_t> OpenCvDecode(const std::vector<uint8_t>& bytes, uint32_t channels) {
  cv::Mat decoded = cv::imdecode(bytes, channels == 3 ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  if (channels == 3) cv::cvtColor(decoded, decoded, cv::COLOR_BGR2RGB);
  return std::vector<uint8_t>(decoded.data, decoded.data + decoded.total() * decoded.elemSize());
}

std::vector<uint8_t> Encode(const cv::Mat& image, const char* extension) {
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(cv::imencode(extension, image, bytes));
  return bytes;
}

TEST_F(DecodeTest, PngAndWebpMatchOpenCvInEveryConversion) {
  cv::Mat bgr(kShape.height, kShape.width, CV_8UC3, pixels_.data());
  cv::Mat gray, bgr16, bgra;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  bgr.convertTo(bgr16, CV_16UC3, 257.0);
  cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
  const std::vector<std::vector<uint8_t>> files = {Encode(bgr, ".png"),   Encode(gray, ".png"),
                                                   Encode(bgr16, ".png"), Encode(bgra, ".png"),
                                                   Encode(bgr, ".webp"),  Encode(gray, ".webp")};
  for (size_t i = 0; i < files.size(); ++i) {
    for (uint32_t channels : {1u, 3u}) {
      Decoded decoded = DecodeBytes(files[i], channels);
      ASSERT_TRUE(decoded.status.ok()) << "file " << i << ": " << decoded.status;
      // Color WebP to gray: OpenCV's vectorized BGR2GRAY rounds some pixels the other way.
      const int tolerance = i == 4 && channels == 1 ? 1 : 0;
      EXPECT_LE(MaxAbsDiff(decoded.pixels, OpenCvDecode(files[i], channels)), tolerance)
          << "file " << i << ", " << channels << " channels";
    }
  }
}

TEST_F(DecodeTest, UnknownMagicIsUnsupportedFormat) {
  const std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 0, 0, 0, 0, 0, 0};
  ExpectBadSample(DecodeBytes(gif, 3).status, BadSampleReason::kUnsupportedFormat,
                  "not a JPEG, PNG or WebP");
  ExpectBadSample(DecodeBytes({}, 3).status, BadSampleReason::kUnsupportedFormat, "magic");
}

TEST_F(DecodeTest, OverPixelBudgetIsTooLargeForEveryFormat) {
  const DecodeLimits small{7499, 100};  // 75 × 100 = 7500 pixels.
  for (const std::vector<uint8_t>& bytes :
       {EncodeJpeg(view_, 90), EncodePng(view_), EncodeWebp(view_)}) {
    ExpectBadSample(DecodeBytes(bytes, 3, small).status, BadSampleReason::kTooLarge,
                    "100x75 = 7500 pixels, over the budget of 7499");
  }
}

TEST_F(DecodeTest, ProgressiveScansAreCountedAndCapped) {
  const std::vector<uint8_t> progressive = EncodeJpeg(view_, 90, /*progressive=*/true);
  const int scans = CountJpegScans(progressive, 1000);
  EXPECT_GT(scans, 2);
  EXPECT_EQ(CountJpegScans(EncodeJpeg(view_, 90), 1000), 1);
  EXPECT_TRUE(DecodeBytes(progressive, 3, DecodeLimits{1'000'000, scans}).status.ok());
  ExpectBadSample(DecodeBytes(progressive, 3, DecodeLimits{1'000'000, scans - 1}).status,
                  BadSampleReason::kTooLarge, "more than");
}

// CountJpegScans as first written, one byte at a time: the reference its NextJpegMarker walk
// (16 positions at a time with SSE2) must match.
int CountScansBytewise(const std::vector<uint8_t>& bytes, int cap) {
  const size_t n = bytes.size();
  size_t pos = 2;
  int scans = 0;
  while (pos + 1 < n && scans <= cap) {
    if (bytes[pos] != 0xFF) return scans;
    while (pos < n && bytes[pos] == 0xFF) ++pos;
    if (pos >= n) return scans;
    const uint8_t marker = bytes[pos++];
    if (marker == 0xD9) return scans;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (pos + 2 > n) return scans;
    const size_t length = size_t{bytes[pos]} << 8 | bytes[pos + 1];
    if (length < 2) return scans;
    pos += length;
    if (marker != 0xDA) continue;
    ++scans;
    for (; pos + 1 < n; ++pos) {
      const uint8_t next = bytes[pos + 1];
      if (bytes[pos] == 0xFF && next != 0x00 && !(next >= 0xD0 && next <= 0xD7)) break;
    }
  }
  return scans;
}

TEST_F(DecodeTest, ScanCountMatchesBytewiseWalkOnDamagedFiles) {
  const std::vector<uint8_t> sources[] = {EncodeJpeg(view_, 90, /*progressive=*/true),
                                          EncodeJpeg(view_, 90)};
  std::srand(13);
  for (const std::vector<uint8_t>& source : sources) {
    EXPECT_EQ(CountJpegScans(source, 1000), CountScansBytewise(source, 1000));
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<uint8_t> bytes = source;
      // Markers, stuffing and restart codes where the walk branches, and random truncation.
      constexpr uint8_t kValues[] = {0xFF, 0x00, 0xD0, 0xD7, 0xD9, 0xDA, 0x01, 0x42};
      for (int k = 0; k < 1 + trial % 4; ++k) {
        bytes[2 + std::rand() % (bytes.size() - 2)] = kValues[std::rand() % 8];
      }
      if (trial % 3 == 0) bytes.resize(2 + std::rand() % (bytes.size() - 2));
      for (const int cap : {1, 3, 1000}) {
        ASSERT_EQ(CountJpegScans(bytes, cap), CountScansBytewise(bytes, cap))
            << "trial " << trial << ", cap " << cap;
      }
    }
  }
}

// NextJpegMarker against a byte-at-a-time search, on buffers dense in 0xFF and 0x00 (so hits
// land at every offset of its 16-byte steps, including the last byte of a step, whose follower
// is the next step's first) and of every length up to 80 (the bytewise tail, and 0xFF last).
TEST(NextJpegMarkerTest, FindsWhatAByteAtATimeSearchFinds) {
  std::srand(29);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes(static_cast<size_t>(trial % 81));
    for (uint8_t& b : bytes) {
      constexpr uint8_t kValues[] = {0xFF, 0xFF, 0xFF, 0x00, 0x00, 0xD0, 0xD9, 0x42};
      b = kValues[std::rand() % 8];
    }
    const uint8_t* end = bytes.data() + bytes.size();
    for (size_t from = 0; from <= bytes.size(); ++from) {
      const uint8_t* expected = nullptr;
      for (size_t i = from; i + 1 < bytes.size(); ++i) {
        if (bytes[i] == 0xFF && bytes[i + 1] != 0x00) {
          expected = bytes.data() + i;
          break;
        }
      }
      ASSERT_EQ(NextJpegMarker(bytes.data() + from, end), expected)
          << "trial " << trial << ", from " << from;
    }
  }
}

TEST_F(DecodeTest, TruncatedOrCorruptIsDecodeError) {
  std::vector<uint8_t> jpeg = EncodeJpeg(view_, 90);
  jpeg.resize(jpeg.size() / 2);
  ExpectBadSample(DecodeBytes(jpeg, 3).status, BadSampleReason::kDecodeError, "JPEG");
  std::vector<uint8_t> png = EncodePng(view_);
  png.resize(png.size() / 2);
  ExpectBadSample(DecodeBytes(png, 3).status, BadSampleReason::kDecodeError, "libpng");
  std::vector<uint8_t> webp = EncodeWebp(view_);
  webp.resize(webp.size() / 2);
  ExpectBadSample(DecodeBytes(webp, 3).status, BadSampleReason::kDecodeError, "libwebp");
  const std::vector<uint8_t> header_only = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16};
  ExpectBadSample(DecodeBytes(header_only, 3).status, BadSampleReason::kDecodeError, "empty image");
}

// Writes a 16-bit big-endian value at `offset`.
void PutBigEndian16(std::vector<uint8_t>& bytes, size_t offset, uint32_t value) {
  bytes[offset] = static_cast<uint8_t>(value >> 8);
  bytes[offset + 1] = static_cast<uint8_t>(value);
}

// A JPEG and a PNG whose headers claim 50,000 × 50,000 pixels (7.5 GB of RGB), padded to 100 KB.
std::vector<std::vector<uint8_t>> DecompressionBombs(const ImageView& view) {
  std::vector<uint8_t> jpeg = EncodeJpeg(view, 90);
  for (size_t i = 0; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {  // SOF0: FF C0, length, precision, H, W
      PutBigEndian16(jpeg, i + 5, 50000);
      PutBigEndian16(jpeg, i + 7, 50000);
      break;
    }
  }
  std::vector<uint8_t> png = EncodePng(view);
  for (size_t offset : {16, 20}) {  // IHDR width and height, 32-bit big-endian
    png[offset] = 0;
    png[offset + 1] = 0;
    PutBigEndian16(png, offset + 2, 50000);
  }
  for (std::vector<uint8_t>* bytes : {&jpeg, &png}) bytes->resize(100 * 1024, 0);
  return {jpeg, png};
}

// AddressSanitizer reserves terabytes of address space for its shadow memory, so under ASan
// (build-asan/) the child runs without the cap; the normal build checks the allocation.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCapAddressSpace = false;
#else
constexpr bool kCapAddressSpace = true;
#endif

// In a child whose address space is capped at 2 GiB a 7.5 GB allocation would fail: exits 0 when
// the header gate answers kTooLarge there (before anything of that size is asked for), else 1.
void ExitZeroIfRejectedUnderAddressCap(const std::vector<uint8_t>& bytes,
                                       const DecodeLimits& limits) {
  const rlimit cap{2ull << 30, 2ull << 30};
  if (kCapAddressSpace) setrlimit(RLIMIT_AS, &cap);
  ImageDecoder decoder;
  const absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(bytes, limits);
  const bool rejected =
      !header.ok() && BadSampleReasonOf(header.status()) == BadSampleReason::kTooLarge;
  std::exit(rejected ? 0 : 1);
}

TEST_F(DecodeTest, HugeHeaderInASmallFileIsRejectedWithoutAllocating) {
  const DecodeLimits limits{50'000'000, 100};
  for (const std::vector<uint8_t>& bomb : DecompressionBombs(view_)) {
    ExpectBadSample(DecodeBytes(bomb, 3, limits).status, BadSampleReason::kTooLarge,
                    "50000x50000 = 2500000000 pixels");
    EXPECT_EXIT(ExitZeroIfRejectedUnderAddressCap(bomb, limits), ::testing::ExitedWithCode(0), "");
  }
}

}  // namespace
}  // namespace stoker
