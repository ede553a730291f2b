#include "common/flags.h"

#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

struct Args {
  explicit Args(std::vector<std::string> a) : storage(std::move(a)) {
    for (auto& s : storage) ptrs.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> storage;
  std::vector<char*> ptrs;
};

class FlagsTest : public ::testing::Test {
 protected:
  FlagsTest() : flags_("prog", "A test program.") {
    flags_.Add("name", &name_, "a name");
    flags_.Add("count", &count_, "a count");
    flags_.Add("verbose", &verbose_, "talk more");
    flags_.Add("ratio", &ratio_, "a ratio");
  }
  FlagSet flags_;
  std::string name_ = "x";
  uint32_t count_ = 1;
  bool verbose_ = false;
  double ratio_ = 0.5;
};

TEST_F(FlagsTest, ParsesBothForms) {
  Args args({"prog", "--name=abc", "--count", "7", "--verbose", "--ratio=0.25"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::nullopt);
  EXPECT_EQ(name_, "abc");
  EXPECT_EQ(count_, 7u);
  EXPECT_TRUE(verbose_);
  EXPECT_DOUBLE_EQ(ratio_, 0.25);
}

TEST_F(FlagsTest, NegatedBool) {
  verbose_ = true;
  Args args({"prog", "--noverbose"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::nullopt);
  EXPECT_FALSE(verbose_);
}

TEST_F(FlagsTest, UnknownFlagExitsTwo) {
  Args args({"prog", "--bogus=1"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::optional<int>(kExitBadFlags));
}

// A name added twice is the program's bug: refused on every run, --help included, before the
// second flag could silently never be set.
TEST_F(FlagsTest, AFlagAddedTwiceFailsEveryParse) {
  std::string other;
  flags_.Add("name", &other, "the same name again");
  Args help({"prog", "--help"});
  EXPECT_EQ(flags_.Parse(help.argc(), help.argv()), std::optional<int>(kExitBadFlags));
  Args plain({"prog", "--name=y"});
  EXPECT_EQ(flags_.Parse(plain.argc(), plain.argv()), std::optional<int>(kExitBadFlags));
  EXPECT_EQ(name_, "x");
}

TEST_F(FlagsTest, BadNumberExitsTwo) {
  Args args({"prog", "--count=-3"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::optional<int>(kExitBadFlags));
}

TEST_F(FlagsTest, MissingValueExitsTwo) {
  Args args({"prog", "--name"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::optional<int>(kExitBadFlags));
}

TEST_F(FlagsTest, HelpExitsZeroAndListsFlags) {
  Args args({"prog", "--help"});
  EXPECT_EQ(flags_.Parse(args.argc(), args.argv()), std::optional<int>(0));
  EXPECT_NE(flags_.Usage().find("--count"), std::string::npos);
}

TEST_F(FlagsTest, FailNamesTheFlagOfAConfigField) {
  flags_.MapField("item_count", "count");
  testing::internal::CaptureStderr();
  EXPECT_EQ(flags_.Fail(absl::InvalidArgumentError("item_count: must be > 0")), kExitBadFlags);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: --count: must be > 0\nRun 'prog --help' for the flags.\n");
}

}  // namespace
}  // namespace stoker
