#include "common/json_text.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(JsonQuotedTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuoted(""), "\"\"");
  EXPECT_EQ(JsonQuoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuoted("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
  EXPECT_EQ(JsonQuoted(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuoted("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through
}

TEST(MicrosFromNanosTest, ExactThreeDecimals) {
  EXPECT_EQ(MicrosFromNanos(0), "0.000");
  EXPECT_EQ(MicrosFromNanos(1'234'567), "1234.567");
  EXPECT_EQ(MicrosFromNanos(-5), "-0.005");
  EXPECT_EQ(MicrosFromNanos(INT64_MIN), "-9223372036854775.808");
}

}  // namespace
}  // namespace stoker
