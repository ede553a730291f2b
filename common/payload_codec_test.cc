#include "common/payload_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "coordinator/status_matchers_for_test.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// Smooth gradients with a little noise, like decoded photos: compressible, not trivially.
std::vector<uint8_t> ImageLikeBytes(size_t n) {
  std::vector<uint8_t> bytes(n);
  std::mt19937 rng(7);
  for (size_t i = 0; i < n; ++i) {
    bytes[i] = static_cast<uint8_t>((i / 97) % 200 + (i % 4 == 0 ? rng() % 4 : 0));
  }
  return bytes;
}

v1::CompressionChoice Choice(v1::Compression codec, int level = 0) {
  v1::CompressionChoice choice;
  choice.set_codec(codec);
  choice.set_level(level);
  return choice;
}

class CodecTest : public ::testing::TestWithParam<v1::CompressionChoice> {};

TEST_P(CodecTest, RoundTripsAndShrinksImageLikeBytes) {
  const std::vector<uint8_t> raw = ImageLikeBytes(1 << 20);
  PayloadBuffer wire;
  ASSERT_THAT(CompressPayload(GetParam(), raw, &wire), IsOk());
  EXPECT_LT(wire.size(), raw.size() * 3 / 4);
  std::vector<uint8_t> out(raw.size(), 0xAA);
  ASSERT_THAT(DecompressPayload(GetParam().codec(), absl::MakeConstSpan(wire.data(), wire.size()),
                                absl::MakeSpan(out)),
              IsOk());
  EXPECT_EQ(out, raw);
}

TEST_P(CodecTest, RoundTripsIncompressibleAndEmptyPayloads) {
  std::vector<uint8_t> raw(300000);
  std::mt19937 rng(3);
  for (uint8_t& b : raw) b = static_cast<uint8_t>(rng());
  PayloadBuffer wire;
  for (size_t size : {raw.size(), size_t{0}}) {
    const absl::Span<const uint8_t> input(raw.data(), size);
    ASSERT_THAT(CompressPayload(GetParam(), input, &wire), IsOk());
    std::vector<uint8_t> out(size);
    ASSERT_THAT(DecompressPayload(GetParam().codec(), absl::MakeConstSpan(wire.data(), wire.size()),
                                  absl::MakeSpan(out)),
                IsOk());
    EXPECT_TRUE(std::equal(out.begin(), out.end(), input.begin()));
  }
}

TEST_P(CodecTest, CorruptTruncatedOrMisSizedPayloadsAreDataLoss) {
  const std::vector<uint8_t> raw = ImageLikeBytes(200000);
  PayloadBuffer wire;
  ASSERT_THAT(CompressPayload(GetParam(), raw, &wire), IsOk());
  const std::vector<uint8_t> good(wire.data(), wire.data() + wire.size());
  const v1::Compression codec = GetParam().codec();
  std::vector<uint8_t> out(raw.size());
  auto decode = [&](const std::vector<uint8_t>& encoded, size_t out_size) {
    return DecompressPayload(codec, encoded, absl::MakeSpan(out.data(), out_size));
  };
  std::vector<uint8_t> flipped = good;
  flipped[flipped.size() / 2] ^= 0x40;  // inside the data: the checksum catches what decodes
  EXPECT_THAT(decode(flipped, raw.size()), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("")));
  for (size_t keep : {size_t{0}, size_t{3}, good.size() / 2, good.size() - 1}) {
    const std::vector<uint8_t> truncated(good.begin(), good.begin() + keep);
    EXPECT_THAT(decode(truncated, raw.size()),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("corrupt")))
        << "kept " << keep;
  }
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  EXPECT_THAT(decode(trailing, raw.size()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("after the frame")));
  EXPECT_THAT(decode(good, raw.size() - 1),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("announced")));
  std::vector<uint8_t> garbage(4096);
  std::mt19937 rng(11);
  for (uint8_t& b : garbage) b = static_cast<uint8_t>(rng());
  EXPECT_THAT(decode(garbage, raw.size()), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("")));
  // The thread's context still works after the errors.
  ASSERT_THAT(decode(good, raw.size()), IsOk());
  EXPECT_EQ(out, raw);
}

// A decode that stops mid-frame must not spoil the next frame on the thread: an empty payload's
// frame declares no size, so liblz4 1.9.4 used to fail it with the aborted frame's remaining
// size (found by fuzz_payload_frame).
TEST_P(CodecTest, AnEmptyPayloadDecodesAfterAnAbortedFrame) {
  const std::vector<uint8_t> raw = ImageLikeBytes(20000);
  PayloadBuffer wire;
  ASSERT_THAT(CompressPayload(GetParam(), raw, &wire), IsOk());
  const std::vector<uint8_t> truncated(wire.data(), wire.data() + wire.size() / 2);
  std::vector<uint8_t> out(raw.size());
  EXPECT_THAT(DecompressPayload(GetParam().codec(), truncated, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("corrupt")));
  PayloadBuffer empty;
  ASSERT_THAT(CompressPayload(GetParam(), {}, &empty), IsOk());
  EXPECT_THAT(DecompressPayload(GetParam().codec(), absl::MakeConstSpan(empty.data(), empty.size()),
                                absl::Span<uint8_t>()),
              IsOk());
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest,
                         ::testing::Values(Choice(v1::COMPRESSION_LZ4),
                                           Choice(v1::COMPRESSION_ZSTD),
                                           Choice(v1::COMPRESSION_ZSTD, -3),
                                           Choice(v1::COMPRESSION_ZSTD, 9)),
                         [](const auto& info) {
                           std::string name = CompressionChoiceName(info.param);
                           for (char& c : name) {
                             if (c == ':' || c == '-') c = '_';
                           }
                           return name;
                         });

TEST(PayloadCodecTest, RawCodecsCannotBeDecoded) {
  std::vector<uint8_t> out(4);
  EXPECT_THAT(DecompressPayload(v1::COMPRESSION_NONE, {}, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("none")));
}

TEST(PayloadCodecTest, ParsesNamesAndRefusesOthersNamingTheField) {
  EXPECT_EQ(ParseCompressionChoice("none", "f")->codec(), v1::COMPRESSION_NONE);
  EXPECT_EQ(ParseCompressionChoice("lz4", "f")->codec(), v1::COMPRESSION_LZ4);
  const absl::StatusOr<v1::CompressionChoice> zstd = ParseCompressionChoice("zstd", "f");
  EXPECT_EQ(zstd->codec(), v1::COMPRESSION_ZSTD);
  EXPECT_EQ(zstd->level(), 0);
  EXPECT_EQ(ParseCompressionChoice("zstd:-5", "f")->level(), -5);
  EXPECT_EQ(CompressionChoiceName(*ParseCompressionChoice("zstd:19", "f")), "zstd:19");
  EXPECT_EQ(CompressionChoiceName(*zstd), "zstd");
  EXPECT_THAT(ParseCompressionChoice("gzip", "compression"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compression: unknown compression 'gzip'")));
  EXPECT_THAT(ParseCompressionChoice("lz4:3", "compression"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("compression: unknown")));
  EXPECT_THAT(ParseCompressionChoice("zstd:x", "compression"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad zstd level")));
  EXPECT_THAT(ParseCompressionChoice("zstd:0", "compression"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad zstd level")));
  EXPECT_THAT(ParseCompressionChoice("zstd:25", "compression"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("compression.level")));
}

TEST(PayloadCodecTest, ValidateNamesCodecAndLevel) {
  EXPECT_THAT(
      ValidateCompressionChoice(Choice(static_cast<v1::Compression>(9)), "open.compression"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("open.compression.codec")));
  EXPECT_THAT(ValidateCompressionChoice(Choice(v1::COMPRESSION_LZ4, 2), "open.compression"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("open.compression.level")));
  EXPECT_THAT(ValidateCompressionChoice(Choice(v1::COMPRESSION_ZSTD, -8), "c"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c.level")));
  EXPECT_THAT(ValidateCompressionChoice(Choice(v1::COMPRESSION_UNSPECIFIED), "c"), IsOk());
}

}  // namespace
}  // namespace stoker
