// DecodeJpegRegion against Decode-then-crop, byte for byte, on photographs (skimage's sample
// images, Debian's python3-skimage): real camera JPEGs as they are, and photos re-encoded with
// every chroma subsampling, baseline and progressive, color and gray, at odd sizes; at every DCT
// scale; windows touching each edge and corner, whole rows and columns, single pixels, and random
// ones.

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode.h"
#include "augment/kernels/geometry.h"
#include "augment/kernels/jpeg_restart_markers.h"
#include "augment/kernels/jpeg_restart_window.h"
#include "augment/synthetic_images.h"
#include "augment/testing/fixture_files.h"
#include "common/bad_sample.h"
#include "common/counter_rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr DecodeLimits kLimits{50'000'000, 100};

std::string SkimagePath(const std::string& name) {
  return std::string(STOKER_SKIMAGE_DATA_DIR) + "/" + name;
}

// A decoded image with its own pixels.
struct Pixels {
  ImageShape shape;
  std::vector<uint8_t> data;
  ImageView view() { return ImageView{data.data(), shape}; }
};

// Decodes (any format) at 1/denominator scale; fails the test on error.
Pixels DecodeWhole(const std::vector<uint8_t>& bytes, uint32_t channels, uint32_t denominator) {
  ImageDecoder decoder;
  absl::StatusOr<EncodedHeader> header = decoder.ReadHeader(bytes, kLimits);
  EXPECT_TRUE(header.ok()) << header.status();
  if (!header.ok()) return {};
  Pixels out{ScaledSize(*header, denominator, channels), {}};
  out.data.resize(out.shape.elements());
  const absl::Status status = decoder.Decode(bytes, out.view());
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

// The top-left `height` × `width` of a photo, encoded as JPEG.
std::vector<uint8_t> ReencodedPhoto(const std::string& png, uint32_t channels, uint32_t height,
                                    uint32_t width, bool progressive,
                                    ChromaSubsampling subsampling) {
  Pixels photo = DecodeWhole(ReadFixtureFile(SkimagePath(png)), channels, 1);
  Pixels part{ImageShape{height, width, channels, PixelType::kUint8}, {}};
  part.data.resize(part.shape.elements());
  Crop(photo.view(), 0, 0, part.view());
  return EncodeJpeg(part.view(), 90, progressive, subsampling);
}

// Windows of an height × width image: the whole, each corner, bands reaching two opposite
// edges, last row and column, single pixels at the corners and center, and random ones.
std::vector<PixelRect> Windows(uint32_t height, uint32_t width, uint64_t seed) {
  const uint32_t h = height / 2 + 1, w = width / 3 + 1;
  std::vector<PixelRect> windows = {
      {0, 0, height, width},
      {0, 0, h, w},
      {0, width - w, h, w},
      {height - h, 0, h, w},
      {height - h, width - w, h, w},
      {height / 3, 0, height / 4 + 1, width},
      {0, width / 3, height, width / 5 + 1},
      {height - 1, 0, 1, width},
      {0, width - 1, height, 1},
      {0, 0, 1, 1},
      {height - 1, width - 1, 1, 1},
      {0, width - 1, 1, 1},
      {height - 1, 0, 1, 1},
      {height / 2, width / 2, 1, 1},
      {height / 2 - 1, width / 2 - 1, std::min(height / 2 + 1, 3u), std::min(width / 2 + 1, 2u)},
  };
  CounterRng rng(seed);
  for (int i = 0; i < 8; ++i) {
    const auto top = static_cast<uint32_t>(rng.UniformInt(height));
    const auto left = static_cast<uint32_t>(rng.UniformInt(width));
    const auto rows = static_cast<uint32_t>(1 + rng.UniformInt(height - top));
    const auto cols = static_cast<uint32_t>(1 + rng.UniformInt(width - left));
    windows.push_back(PixelRect{top, left, rows, cols});
  }
  return windows;
}

// The offset of the first marker FF `code` at or after `from`, 0 when there is none.
size_t FindMarker(const std::vector<uint8_t>& jpeg, uint8_t code, size_t from = 2) {
  for (size_t i = from; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == code) return i;
  }
  return 0;
}

std::string Describe(const PixelRect& r) {
  return absl::StrCat("window top=", r.top, " left=", r.left, " ", r.height, "x", r.width);
}

// For each DCT scale and output channel count: every window decoded alone equals the whole
// decode cut to it.
void ExpectRegionsEqualWholeDecode(const std::vector<uint8_t>& jpeg) {
  ASSERT_FALSE(jpeg.empty());
  ImageDecoder decoder;
  for (const uint32_t channels : {3u, 1u}) {
    for (const uint32_t denominator : {1u, 2u, 4u, 8u}) {
      SCOPED_TRACE(absl::StrCat(channels, " channels, scale 1/", denominator));
      Pixels whole = DecodeWhole(jpeg, channels, denominator);
      for (const PixelRect& window : Windows(whole.shape.height, whole.shape.width, denominator)) {
        Pixels expected{ImageShape{window.height, window.width, channels, PixelType::kUint8}, {}};
        expected.data.resize(expected.shape.elements());
        Crop(whole.view(), window.top, window.left, expected.view());
        ASSERT_TRUE(decoder.ReadHeader(jpeg, kLimits).ok());
        ImageBuffer span;
        PixelRect in_span;
        const absl::Status status =
            decoder.DecodeJpegRegion(jpeg, window, denominator, channels, &span, &in_span);
        ASSERT_TRUE(status.ok()) << status << " " << Describe(window);
        ASSERT_EQ(span.shape().height, window.height);
        ASSERT_LE(in_span.left + window.width, span.shape().width);
        ASSERT_EQ(in_span.height, window.height);
        ASSERT_EQ(in_span.width, window.width);
        Pixels got{expected.shape, std::vector<uint8_t>(expected.data.size())};
        Crop(span.view(), in_span.top, in_span.left, got.view());
        size_t differing = 0, first = 0;
        for (size_t i = got.data.size(); i-- > 0;) {
          if (got.data[i] != expected.data[i]) ++differing, first = i;
        }
        const size_t pixel = first / channels;
        EXPECT_EQ(differing, 0u) << Describe(window) << ": first at y=" << pixel / window.width
                                 << " x=" << pixel % window.width;
      }
    }
  }
}

TEST(DecodeJpegRegionTest, CameraJpegsAsTheyAre) {
  // rocket and hubble are 4:4:4, retina (1411 x 1411) 4:2:0.
  for (const char* name : {"rocket.jpg", "hubble_deep_field.jpg", "retina.jpg"}) {
    SCOPED_TRACE(name);
    ExpectRegionsEqualWholeDecode(ReadFixtureFile(SkimagePath(name)));
  }
}

TEST(DecodeJpegRegionTest, EverySubsamplingBaselineAndProgressive) {
  for (const ChromaSubsampling subsampling :
       {ChromaSubsampling::k444, ChromaSubsampling::k422, ChromaSubsampling::k420,
        ChromaSubsampling::k440, ChromaSubsampling::k411}) {
    for (const bool progressive : {false, true}) {
      SCOPED_TRACE(absl::StrCat("subsampling ", static_cast<int>(subsampling),
                                progressive ? " progressive" : " baseline"));
      // Odd sizes: neither a multiple of the iMCU nor even.
      ExpectRegionsEqualWholeDecode(
          ReencodedPhoto("chelsea.png", 3, 299, 451, progressive, subsampling));
      ExpectRegionsEqualWholeDecode(
          ReencodedPhoto("motorcycle_left.png", 3, 500, 741, progressive, subsampling));
    }
  }
}

// A progressive file cut after its first scans (then EOI): libjpeg smooths the blocks whose AC
// coefficients are still unknown, from the DC values of their neighbours.
TEST(DecodeJpegRegionTest, ProgressiveFileWithOnlyItsFirstScans) {
  for (const int scans : {1, 2, 4}) {
    SCOPED_TRACE(absl::StrCat(scans, " scans"));
    std::vector<uint8_t> jpeg =
        ReencodedPhoto("motorcycle_left.png", 3, 500, 741, true, ChromaSubsampling::k420);
    int seen = 0;
    for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
      if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA && ++seen == scans + 1) {
        jpeg.resize(i);
        jpeg.insert(jpeg.end(), {0xFF, 0xD9});
        break;
      }
    }
    ASSERT_EQ(seen, scans + 1);
    ExpectRegionsEqualWholeDecode(jpeg);
  }
}

TEST(DecodeJpegRegionTest, GrayJpegs) {
  for (const bool progressive : {false, true}) {
    SCOPED_TRACE(progressive ? "progressive" : "baseline");
    ExpectRegionsEqualWholeDecode(
        ReencodedPhoto("camera.png", 1, 509, 383, progressive, ChromaSubsampling::k444));
    ExpectRegionsEqualWholeDecode(
        ReencodedPhoto("coffee.png", 1, 400, 599, progressive, ChromaSubsampling::k444));
  }
}

TEST(DecodeJpegRegionTest, CmykAndYcckJpegsConvertLikePil) {
  for (const char* name : {"cmyk_adobe.jpg", "cmyk_no_adobe.jpg", "ycck.jpg"}) {
    SCOPED_TRACE(name);
    ExpectRegionsEqualWholeDecode(
        ReadFixtureFile(std::string(STOKER_PIL_FIXTURES_DIR) + "/" + name));
  }
}

TEST(DecodeJpegRegionTest, TruncatedFileIsRefusedWhereverTheWindowIs) {
  std::vector<uint8_t> jpeg =
      ReencodedPhoto("chelsea.png", 3, 300, 451, false, ChromaSubsampling::k420);
  jpeg.resize(jpeg.size() * 3 / 5);  // The bottom rows are missing; the top ones are whole.
  ImageDecoder decoder;
  ASSERT_TRUE(decoder.ReadHeader(jpeg, kLimits).ok());
  Pixels whole{ImageShape{300, 451, 3, PixelType::kUint8}, {}};
  whole.data.resize(whole.shape.elements());
  const absl::Status whole_status = decoder.Decode(jpeg, whole.view());
  ASSERT_EQ(BadSampleReasonOf(whole_status), BadSampleReason::kDecodeError) << whole_status;

  ImageBuffer top;
  PixelRect in_top;
  ASSERT_TRUE(decoder.ReadHeader(jpeg, kLimits).ok());
  const absl::Status status =
      decoder.DecodeJpegRegion(jpeg, PixelRect{0, 8, 16, 32}, 1, 3, &top, &in_top);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_EQ(BadSampleReasonOf(status), BadSampleReason::kDecodeError);
  EXPECT_EQ(status.message(), whole_status.message());
  EXPECT_THAT(std::string(status.message()), HasSubstr("Premature end of JPEG file"));

  // The decoder is still usable after the error.
  ExpectRegionsEqualWholeDecode(
      ReencodedPhoto("chelsea.png", 3, 300, 451, false, ChromaSubsampling::k420));
}

// Windows at the top, middle and bottom are refused exactly when the whole decode is.
void ExpectVerdictOfWholeDecode(const std::vector<uint8_t>& jpeg, uint32_t height, uint32_t width) {
  ImageDecoder decoder;
  ASSERT_TRUE(decoder.ReadHeader(jpeg, kLimits).ok());
  Pixels whole{ImageShape{height, width, 3, PixelType::kUint8}, {}};
  whole.data.resize(whole.shape.elements());
  const absl::Status whole_status = decoder.Decode(jpeg, whole.view());
  for (const PixelRect& window : {PixelRect{0, 8, 16, 32}, PixelRect{height / 2, 0, 20, width},
                                  PixelRect{height - 24, width - 40, 24, 40}}) {
    ASSERT_TRUE(decoder.ReadHeader(jpeg, kLimits).ok());
    ImageBuffer span;
    PixelRect in_span;
    const absl::Status status = decoder.DecodeJpegRegion(jpeg, window, 1, 3, &span, &in_span);
    EXPECT_EQ(status.code(), whole_status.code()) << Describe(window) << ": " << status;
    EXPECT_EQ(status.message(), whole_status.message()) << Describe(window);
  }
}

// The rows below a window are left undecoded when an EOI marker lies ahead; these files probe
// that rule's edges: the verdict and the pixels stay those of the whole decode.
TEST(DecodeJpegRegionTest, ScanCutShortButEndingInEoiDecodesAsInTheWholeDecode) {
  std::vector<uint8_t> jpeg =
      ReencodedPhoto("chelsea.png", 3, 300, 451, false, ChromaSubsampling::k420);
  jpeg.resize(jpeg.size() * 3 / 5);
  jpeg.insert(jpeg.end(), {0xFF, 0xD9});  // libjpeg warns "premature end of data segment"
  ExpectVerdictOfWholeDecode(jpeg, 300, 451);
  ExpectRegionsEqualWholeDecode(jpeg);
}

TEST(DecodeJpegRegionTest, FileMissingOnlyItsEoiHasTheWholeDecodesVerdict) {
  std::vector<uint8_t> jpeg =
      ReencodedPhoto("chelsea.png", 3, 300, 451, false, ChromaSubsampling::k420);
  ASSERT_EQ(jpeg[jpeg.size() - 2], 0xFF);
  ASSERT_EQ(jpeg.back(), 0xD9);
  jpeg.resize(jpeg.size() - 2);
  ExpectVerdictOfWholeDecode(jpeg, 300, 451);
}

TEST(DecodeJpegRegionTest, BytesAfterTheEoiAreIgnoredAsInTheWholeDecode) {
  std::vector<uint8_t> jpeg =
      ReencodedPhoto("chelsea.png", 3, 300, 451, false, ChromaSubsampling::k420);
  jpeg.insert(jpeg.end(), {0x00, 0x12, 0xFF, 0x00, 0xFF, 0xFF, 0x34});
  ExpectVerdictOfWholeDecode(jpeg, 300, 451);
  ExpectRegionsEqualWholeDecode(jpeg);
}

TEST(DecodeJpegRegionTest, CorruptEntropyDataDecodesAsInTheWholeDecode) {
  // Bytes overwritten in the middle of the scan: libjpeg warns ("Corrupt JPEG data") and
  // resynchronizes; a window must show the same damaged pixels the whole decode shows.
  std::vector<uint8_t> jpeg =
      ReencodedPhoto("motorcycle_left.png", 3, 500, 741, false, ChromaSubsampling::k420);
  ASSERT_GT(jpeg.size(), 4000u);
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 40; i += 3) jpeg[i] ^= 0x5A;
  ExpectRegionsEqualWholeDecode(jpeg);
}

// Restart-marked files (stoker-pack --restart-markers) are cut to the intervals a window needs
// (jpeg_restart_window.h); the windows still equal the whole decode's.
std::vector<uint8_t> WithRestartMarkers(const std::vector<uint8_t>& jpeg) {
  absl::StatusOr<std::vector<uint8_t>> marked = AddJpegRestartMarkers(jpeg);
  EXPECT_TRUE(marked.ok()) << marked.status();
  return marked.ok() ? *marked : std::vector<uint8_t>{};
}

// A window well inside the image is decoded from a cut, not from the whole file.
void ExpectInteriorWindowIsCut(const std::vector<uint8_t>& jpeg, uint32_t height, uint32_t width) {
  RestartCut cut;
  const PixelRect window{height / 3, width / 3, height / 4, width / 4};
  ASSERT_TRUE(CutToRestartIntervals(jpeg, window, 1, &cut)) << Describe(window);
  EXPECT_LT(cut.jpeg.size(), jpeg.size() / 2);
  EXPECT_LE(cut.top, window.top);
  EXPECT_LE(cut.left, window.left);
  EXPECT_GT(cut.top + cut.left, 0u);
}

TEST(DecodeJpegRegionTest, RestartMarkedFilesAreCutAndEqualTheWholeDecode) {
  for (const ChromaSubsampling subsampling :
       {ChromaSubsampling::k444, ChromaSubsampling::k422, ChromaSubsampling::k420,
        ChromaSubsampling::k440, ChromaSubsampling::k411}) {
    SCOPED_TRACE(absl::StrCat("subsampling ", static_cast<int>(subsampling)));
    for (const bool progressive : {false, true}) {  // Both become sequential.
      const std::vector<uint8_t> jpeg = WithRestartMarkers(
          ReencodedPhoto("motorcycle_left.png", 3, 500, 741, progressive, subsampling));
      ExpectInteriorWindowIsCut(jpeg, 500, 741);
      ExpectRegionsEqualWholeDecode(jpeg);
    }
    const std::vector<uint8_t> odd =
        WithRestartMarkers(ReencodedPhoto("chelsea.png", 3, 299, 451, false, subsampling));
    ExpectInteriorWindowIsCut(odd, 299, 451);
    ExpectRegionsEqualWholeDecode(odd);
  }
  const std::vector<uint8_t> gray =
      WithRestartMarkers(ReencodedPhoto("camera.png", 1, 509, 383, false, ChromaSubsampling::k444));
  ExpectInteriorWindowIsCut(gray, 509, 383);
  ExpectRegionsEqualWholeDecode(gray);
  const std::vector<uint8_t> camera =
      WithRestartMarkers(ReadFixtureFile(SkimagePath("retina.jpg")));
  ExpectInteriorWindowIsCut(camera, 1411, 1411);
  ExpectRegionsEqualWholeDecode(camera);
}

// Fill bytes (a run of 0xFF) before the restart markers, which JPEG allows: the cut's marker
// scan (16 positions at a time) takes the marker at the run's last 0xFF, as a byte-by-byte scan
// does, and stuffed 0xFF 0x00 pairs across its 16-byte steps are not taken for markers.
TEST(DecodeJpegRegionTest, FillBytesBeforeRestartMarkersAreCutAndEqualTheWholeDecode) {
  const std::vector<uint8_t> marked = WithRestartMarkers(
      ReencodedPhoto("motorcycle_left.png", 3, 500, 741, false, ChromaSubsampling::k420));
  const size_t sos = FindMarker(marked, 0xDA);
  ASSERT_GT(sos, 0u);
  std::vector<uint8_t> filled(marked.begin(), marked.begin() + sos);
  size_t runs = 0;
  for (size_t i = sos; i < marked.size(); ++i) {
    const bool restart = i + 1 < marked.size() && marked[i] == 0xFF && marked[i + 1] >= 0xD0 &&
                         marked[i + 1] <= 0xD7;
    if (restart) {
      runs++;
      filled.insert(filled.end(), runs % 3 + 1, 0xFF);  // 1 to 3 fill bytes.
    }
    filled.push_back(marked[i]);
  }
  ASSERT_GT(runs, 100u);
  ExpectInteriorWindowIsCut(filled, 500, 741);
  ExpectRegionsEqualWholeDecode(filled);
}

TEST(DecodeJpegRegionTest, RestartMarkedCmykAndYcckFilesAreCutAndEqualTheWholeDecode) {
  for (const char* name : {"cmyk_adobe.jpg", "cmyk_no_adobe.jpg", "ycck.jpg"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> jpeg =
        WithRestartMarkers(ReadFixtureFile(std::string(STOKER_PIL_FIXTURES_DIR) + "/" + name));
    RestartCut cut;  // 37 x 47: an interval is a whole MCU row, so bottom windows are cut.
    EXPECT_TRUE(CutToRestartIntervals(jpeg, PixelRect{30, 0, 7, 47}, 1, &cut));
    ExpectRegionsEqualWholeDecode(jpeg);
  }
}

TEST(DecodeJpegRegionTest, FilesWithoutUsableRestartIntervalsAreNotCut) {
  const std::vector<uint8_t> plain =
      ReencodedPhoto("chelsea.png", 3, 299, 451, false, ChromaSubsampling::k420);
  const std::vector<uint8_t> progressive =
      ReencodedPhoto("chelsea.png", 3, 299, 451, true, ChromaSubsampling::k420);
  const std::vector<uint8_t> marked = WithRestartMarkers(plain);
  const PixelRect window{100, 150, 50, 60};
  RestartCut cut;
  EXPECT_FALSE(CutToRestartIntervals(plain, window, 1, &cut));        // No DRI.
  EXPECT_FALSE(CutToRestartIntervals(progressive, window, 1, &cut));  // Progressive frame.
  ASSERT_TRUE(CutToRestartIntervals(marked, window, 1, &cut));
  // The whole width from the top row: nothing to save.
  EXPECT_FALSE(CutToRestartIntervals(marked, PixelRect{0, 0, 50, 451}, 1, &cut));

  // An interval that does not divide an MCU row's 29 MCUs: rows would not hold whole intervals.
  std::vector<uint8_t> odd_interval = marked;
  const size_t dri = FindMarker(odd_interval, 0xDD);
  ASSERT_GT(dri, 0u);
  odd_interval[dri + 4] = 0;
  odd_interval[dri + 5] = 3;
  EXPECT_FALSE(CutToRestartIntervals(odd_interval, window, 1, &cut));

  // A frame header claiming 60000 x 60000 pixels over these few bytes: refused before scratch
  // space for its millions of intervals is reserved.
  std::vector<uint8_t> oversized = marked;
  const size_t sof = FindMarker(oversized, 0xC0);
  ASSERT_GT(sof, 0u);
  for (const size_t at : {sof + 5, sof + 7}) oversized[at] = 0xEA, oversized[at + 1] = 0x60;
  RestartCut fresh;
  EXPECT_FALSE(CutToRestartIntervals(oversized, PixelRect{50000, 50000, 100, 100}, 1, &fresh));
  EXPECT_LT(fresh.interval_end.capacity(), marked.size());

  // A restart marker out of sequence before the window, and a truncated file: decoded whole,
  // with the whole decode's pixels and verdict.
  std::vector<uint8_t> out_of_sequence = marked;
  const size_t rst = FindMarker(out_of_sequence, 0xD3, dri);
  ASSERT_GT(rst, 0u);
  out_of_sequence[rst + 1] = 0xD5;
  EXPECT_FALSE(CutToRestartIntervals(out_of_sequence, window, 1, &cut));
  ExpectRegionsEqualWholeDecode(out_of_sequence);
  std::vector<uint8_t> truncated = marked;
  truncated.resize(truncated.size() * 3 / 5);
  EXPECT_FALSE(CutToRestartIntervals(truncated, PixelRect{0, 100, 20, 40}, 1, &cut));
  ExpectVerdictOfWholeDecode(truncated, 299, 451);
}

TEST(DecodeJpegRegionTest, CorruptRestartIntervalDecodesAsInTheWholeDecode) {
  std::vector<uint8_t> jpeg = WithRestartMarkers(
      ReencodedPhoto("motorcycle_left.png", 3, 500, 741, false, ChromaSubsampling::k420));
  ASSERT_GT(jpeg.size(), 4000u);
  // Damage without forming markers (no 0xFF written), so the file is still cut.
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 40; i += 3) {
    if (jpeg[i] != 0xFF && jpeg[i - 1] != 0xFF)
      jpeg[i] = (jpeg[i] ^ 0x5A) == 0xFF ? 0 : jpeg[i] ^ 0x5A;
  }
  ExpectRegionsEqualWholeDecode(jpeg);
}

TEST(DecodeJpegRegionTest, DecoderRecoversAfterABadHeader) {
  // A Huffman table definition whose code counts add up to more than 256 symbols.
  const std::vector<uint8_t> good =
      ReencodedPhoto("chelsea.png", 3, 299, 451, false, ChromaSubsampling::k420);
  std::vector<uint8_t> bad = good;
  const size_t dht = FindMarker(bad, 0xC4);
  ASSERT_GT(dht, 0u);
  for (size_t i = dht + 5; i < dht + 5 + 16; ++i) bad[i] = 0xFF;  // The 16 code counts.
  ImageDecoder decoder;
  const absl::StatusOr<EncodedHeader> refused = decoder.ReadHeader(bad, kLimits);
  EXPECT_EQ(BadSampleReasonOf(refused.status()), BadSampleReason::kDecodeError) << refused.status();
  // The same decoder then reads, decodes whole and decodes a window of a good file.
  ASSERT_TRUE(decoder.ReadHeader(good, kLimits).ok());
  Pixels whole{ImageShape{299, 451, 3, PixelType::kUint8}, {}};
  whole.data.resize(whole.shape.elements());
  EXPECT_TRUE(decoder.Decode(good, whole.view()).ok());
  ASSERT_TRUE(decoder.ReadHeader(good, kLimits).ok());
  ImageBuffer span;
  PixelRect in_span;
  EXPECT_TRUE(
      decoder.DecodeJpegRegion(good, PixelRect{10, 20, 30, 40}, 1, 3, &span, &in_span).ok());
}

}  // namespace
}  // namespace stoker
