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

class DurationFlagTest : public ::testing::Test {
 protected:
  DurationFlagTest() : flags_("prog", "A test program.") {
    flags_.Add("timeout-ms", &timeout_, absl::Milliseconds(1), "deadline of a call");
  }
  // The exit code of parsing `--timeout-ms=<value>`; stderr in `error`.
  std::optional<int> ParseTimeout(const std::string& value) {
    Args args({"prog", "--timeout-ms=" + value});
    testing::internal::CaptureStderr();
    std::optional<int> exit_code = flags_.Parse(args.argc(), args.argv());
    error = testing::internal::GetCapturedStderr();
    return exit_code;
  }
  FlagSet flags_;
  absl::Duration timeout_ = absl::Milliseconds(500);
  std::string error;
};

// Scripts that pass --timeout-ms=250 keep working: a bare number is in the flag's unit.
TEST_F(DurationFlagTest, ABareNumberIsInTheFlagsUnit) {
  EXPECT_EQ(ParseTimeout("250"), std::nullopt);
  EXPECT_EQ(timeout_, absl::Milliseconds(250));
  EXPECT_EQ(ParseTimeout("1.5"), std::nullopt);
  EXPECT_EQ(timeout_, absl::Microseconds(1500));
  EXPECT_EQ(ParseTimeout("0"), std::nullopt);
  EXPECT_EQ(timeout_, absl::ZeroDuration());
}

TEST_F(DurationFlagTest, ANumberWithAUnitIsTakenAsWritten) {
  EXPECT_EQ(ParseTimeout("1.5s"), std::nullopt);
  EXPECT_EQ(timeout_, absl::Milliseconds(1500));
  EXPECT_EQ(ParseTimeout("1m30s"), std::nullopt);
  EXPECT_EQ(timeout_, absl::Seconds(90));
  EXPECT_EQ(ParseTimeout("250us"), std::nullopt);
  EXPECT_EQ(timeout_, absl::Microseconds(250));
}

TEST_F(DurationFlagTest, ABadValueExitsTwoNamingTheFlag) {
  for (const std::string value : {"", "soon", "5 parsecs", "5parsecs", "1.5.2", "inf", "nan"}) {
    EXPECT_EQ(ParseTimeout(value), std::optional<int>(kExitBadFlags)) << value;
    EXPECT_EQ(error, "prog: --timeout-ms: '" + value +
                         "' is not a duration (a number of ms, or with a unit: 1.5s, 250ms)\n"
                         "Run 'prog --help' for the flags.\n")
        << value;
  }
  EXPECT_EQ(timeout_, absl::Milliseconds(500));
}

TEST_F(DurationFlagTest, ANegativeValueExitsTwoNamingTheFlag) {
  for (const std::string value : {"-3", "-1s"}) {
    EXPECT_EQ(ParseTimeout(value), std::optional<int>(kExitBadFlags)) << value;
    EXPECT_EQ(error, "prog: --timeout-ms: '" + value +
                         "' is negative\nRun 'prog --help' for the flags.\n");
  }
  EXPECT_EQ(timeout_, absl::Milliseconds(500));
}

TEST_F(DurationFlagTest, HelpShowsTheDefaultInTheUnitAndTheForms) {
  EXPECT_NE(flags_.Usage().find("--timeout-ms  deadline of a call (a number of ms, or with a unit: "
                                "1.5s, 250ms) (default: 500)"),
            std::string::npos)
      << flags_.Usage();
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
