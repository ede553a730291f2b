#include "common/byte_codec.h"

#include <string>
#include <vector>

#include "common/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

std::string Framed(FrameChecksum checksum, absl::string_view payload) {
  std::string out;
  AppendFrameHeader(checksum, AsBytes(payload), &out);
  out.append(payload.data(), payload.size());
  return out;
}

TEST(ByteCodecTest, AppendsLittleEndianWhateverTheHost) {
  std::string out;
  AppendLittleEndian(uint16_t{0x0102}, &out);
  AppendLittleEndian(uint32_t{0x03040506}, &out);
  AppendLittleEndian(uint64_t{0x0708090a0b0c0d0e}, &out);
  EXPECT_EQ(out, std::string("\x02\x01\x06\x05\x04\x03\x0e\x0d\x0c\x0b\x0a\x09\x08\x07", 14));
  std::vector<uint8_t> bytes;
  AppendLittleEndian(uint32_t{0xfffefdfc}, &bytes);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0xfc, 0xfd, 0xfe, 0xff}));
}

TEST(ByteCodecTest, ReaderReadsBackWhatWasAppended) {
  std::string out;
  AppendLittleEndian(uint16_t{0xbeef}, &out);
  AppendLittleEndian(uint32_t{0xdeadbeef}, &out);
  AppendLittleEndian(uint64_t{0x0123456789abcdef}, &out);
  out += "tail";
  ByteReader reader(AsBytes(out));
  uint16_t a = 0;
  uint32_t b = 0;
  uint64_t c = 0;
  absl::Span<const uint8_t> tail;
  ASSERT_TRUE(reader.Read(&a) && reader.Read(&b) && reader.Read(&c));
  EXPECT_EQ(a, 0xbeef);
  EXPECT_EQ(b, 0xdeadbeefu);
  EXPECT_EQ(c, 0x0123456789abcdefu);
  ASSERT_TRUE(reader.ReadBytes(4, &tail));
  EXPECT_EQ(std::string(tail.begin(), tail.end()), "tail");
  EXPECT_EQ(reader.remaining(), 0u);
}

TEST(ByteCodecTest, ReadPastTheEndFailsAndConsumesNothing) {
  const std::string three("\x01\x02\x03", 3);
  ByteReader reader(AsBytes(three));
  uint32_t word = 7;
  absl::Span<const uint8_t> run;
  EXPECT_FALSE(reader.Read(&word));
  EXPECT_EQ(word, 7u);
  EXPECT_FALSE(reader.ReadBytes(4, &run));
  EXPECT_EQ(reader.position(), 0u);
  uint16_t half = 0;
  ASSERT_TRUE(reader.Read(&half));
  EXPECT_EQ(half, 0x0201);
  EXPECT_FALSE(reader.Read(&half));
  EXPECT_EQ(reader.remaining(), 1u);
}

TEST(ByteCodecTest, FrameHeaderIsLengthThenChecksum) {
  const std::string payload = "abc";
  const std::string plain = Framed(FrameChecksum::kPayload, payload);
  const std::string crc_of_abc("\xb7\x3f\x4b\x36", 4);  // Crc32c("abc") == 0x364b3fb7
  EXPECT_EQ(plain, std::string("\x03\0\0\0", 4) + crc_of_abc + payload);

  // The journal's checksum: LevelDB's mask over the CRC of the length bytes, then the payload.
  const std::string masked = Framed(FrameChecksum::kMaskedLengthAndPayload, payload);
  const uint32_t crc = Crc32cExtend(Crc32c("\x03\0\0\0", 4), payload.data(), payload.size());
  std::string expected("\x03\0\0\0", 4);
  AppendLittleEndian(((crc >> 15) | (crc << 17)) + 0xa282ead8u, &expected);
  EXPECT_EQ(masked, expected + payload);
}

TEST(ByteCodecTest, ReadsAFrameFollowedByMore) {
  for (FrameChecksum checksum : {FrameChecksum::kPayload, FrameChecksum::kMaskedLengthAndPayload}) {
    const std::string bytes = Framed(checksum, "hello") + Framed(checksum, "");
    absl::Span<const uint8_t> payload;
    ASSERT_TRUE(ReadFrame(checksum, AsBytes(bytes), 100, &payload).ok());
    EXPECT_EQ(std::string(payload.begin(), payload.end()), "hello");
    const size_t second = kFrameHeaderBytes + payload.size();
    ASSERT_TRUE(ReadFrame(checksum, AsBytes(bytes).subspan(second), 100, &payload).ok());
    EXPECT_TRUE(payload.empty());
  }
}

TEST(ByteCodecTest, TruncatedFrameIsOutOfRange) {
  const std::string bytes = Framed(FrameChecksum::kMaskedLengthAndPayload, "payload");
  for (size_t cut :
       {size_t{0}, size_t{3}, kFrameHeaderBytes - 1, kFrameHeaderBytes, bytes.size() - 1}) {
    absl::Span<const uint8_t> payload;
    const absl::Status status =
        ReadFrame(FrameChecksum::kMaskedLengthAndPayload, AsBytes(bytes).first(cut), 100, &payload);
    EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << cut;
    EXPECT_THAT(status.message(), HasSubstr("frame cut short")) << cut;
  }
}

TEST(ByteCodecTest, LengthAboveTheLimitIsDataLossBeforeThePayloadIsSought) {
  // Cut inside the payload too: the length is judged first.
  const std::string bytes = Framed(FrameChecksum::kPayload, "0123456789").substr(0, 12);
  absl::Span<const uint8_t> payload;
  const absl::Status status = ReadFrame(FrameChecksum::kPayload, AsBytes(bytes), 9, &payload);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "length 10 above the limit");
}

TEST(ByteCodecTest, CorruptedChecksumOrPayloadIsDataLoss) {
  for (FrameChecksum checksum : {FrameChecksum::kPayload, FrameChecksum::kMaskedLengthAndPayload}) {
    for (size_t flip : {size_t{4}, size_t{7}, kFrameHeaderBytes, kFrameHeaderBytes + 4}) {
      std::string bytes = Framed(checksum, "abcde");
      bytes[flip] ^= 0x20;
      absl::Span<const uint8_t> payload;
      const absl::Status status = ReadFrame(checksum, AsBytes(bytes), 100, &payload);
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << flip;
      EXPECT_EQ(status.message(), "crc mismatch") << flip;
    }
  }
}

}  // namespace
}  // namespace stoker
