#include "common/crc32c.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xFF, and ascending.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), ascending(32);
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(ascending.data(), 32), 0x46DD794Eu);
}

TEST(Crc32cTest, ExtendEqualsWholeAndPathsAgree) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>(i * 131 + 7));
  const uint32_t whole = Crc32c(text.data(), text.size());
  EXPECT_EQ(Crc32cExtendPortable(0, text.data(), text.size()), whole);
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{513}, text.size()}) {
    const uint32_t head = Crc32c(text.data(), split);
    EXPECT_EQ(Crc32cExtend(head, text.data() + split, text.size() - split), whole) << split;
    EXPECT_EQ(Crc32cExtendPortable(head, text.data() + split, text.size() - split), whole);
  }
}

}  // namespace
}  // namespace stoker
