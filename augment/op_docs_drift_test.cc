// docs/augmentations.md's op tables are generated from the op registry (augment/op_docs.h): this
// fails, saying how to regenerate them, when the checked-in tables differ from what the registry
// gives now (an op, argument, default or torchvision note changed without the document, or the
// document's table edited by hand).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "augment/op_docs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

constexpr char kRegenerate[] =
    "docs/augmentations.md's generated op tables differ from the op registry (augment/ops/*.cc, "
    "augment/batch_mix.cc). The registry is the source: change the op there, then regenerate "
    "the tables with\n"
    "  scripts/build.sh stoker-ctl && build/tools/stoker-ctl pipeline ops "
    "--update=docs/augmentations.md\n";

// The first line where `a` and `b` differ, as "line N:\n  checked in: ...\n  generated:  ...".
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream in_a(a), in_b(b);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(in_a, line_a));
    const bool more_b = static_cast<bool>(std::getline(in_b, line_b));
    if (!more_a && !more_b) return "";
    if (!more_a) line_a = "(end of file)";
    if (!more_b) line_b = "(end of file)";
    if (line_a != line_b || !more_a || !more_b) {
      return "first difference, line " + std::to_string(line) + ":\n  checked in: " + line_a +
             "\n  generated:  " + line_b + "\n";
    }
  }
}

TEST(OpDocsDriftTest, AugmentationsMdTablesMatchTheRegistry) {
  std::ifstream file(STOKER_AUGMENTATIONS_MD, std::ios::binary);
  ASSERT_TRUE(file) << "cannot read " << STOKER_AUGMENTATIONS_MD;
  std::stringstream doc;
  doc << file.rdbuf();
  absl::StatusOr<std::string> regenerated = SpliceGeneratedBlocks(doc.str(), OpDocBlocks());
  ASSERT_TRUE(regenerated.ok()) << regenerated.status() << "\n" << kRegenerate;
  EXPECT_TRUE(*regenerated == doc.str()) << kRegenerate << FirstDifference(doc.str(), *regenerated);
}

TEST(SpliceGeneratedBlocksTest, ReplacesOnlyBetweenMarkers) {
  const std::vector<GeneratedBlock> blocks = {
      {"t", "<!-- BEGIN GENERATED t: note -->\nnew\n<!-- END GENERATED t -->\n"}};
  const std::string doc =
      "intro\n<!-- BEGIN GENERATED t: old note -->\nold\nrows\n<!-- END GENERATED t -->\nrest\n";
  absl::StatusOr<std::string> out = SpliceGeneratedBlocks(doc, blocks);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "intro\n<!-- BEGIN GENERATED t: note -->\nnew\n<!-- END GENERATED t -->\nrest\n");
  // Splicing again changes nothing: what the drift test relies on.
  EXPECT_EQ(*SpliceGeneratedBlocks(*out, blocks), *out);
}

TEST(SpliceGeneratedBlocksTest, MissingOrRepeatedMarkersAreErrors) {
  const std::vector<GeneratedBlock> blocks = {
      {"t", "<!-- BEGIN GENERATED t: x -->\n<!-- END GENERATED t -->\n"}};
  EXPECT_THAT(SpliceGeneratedBlocks("no markers\n", blocks).status().message(),
              HasSubstr("generated block 't'"));
  EXPECT_FALSE(
      SpliceGeneratedBlocks("<!-- END GENERATED t -->\n<!-- BEGIN GENERATED t: x -->\n", blocks)
          .ok());
  EXPECT_THAT(SpliceGeneratedBlocks("<!-- BEGIN GENERATED t: a -->\n<!-- BEGIN GENERATED t: b "
                                    "-->\n<!-- END GENERATED t -->\n",
                                    blocks)
                  .status()
                  .message(),
              HasSubstr("two"));
  // A block whose name extends another's is not taken for it.
  EXPECT_FALSE(
      SpliceGeneratedBlocks("<!-- BEGIN GENERATED t-2: x -->\n<!-- END GENERATED t-2 -->\n", blocks)
          .ok());
}

TEST(OpDocBlocksTest, TablesListEveryOpWithItsArguments) {
  const std::vector<GeneratedBlock> blocks = OpDocBlocks();
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].name, "op-table");
  EXPECT_THAT(blocks[0].text,
              HasSubstr("| `horizontal_flip(p=0.5)` | `RandomHorizontalFlip` / `F.hflip` | any |"));
  EXPECT_THAT(blocks[0].text, HasSubstr("`gaussian_blur(ksize, sigma=0, sigma_min=0.1, "));
  EXPECT_EQ(blocks[1].name, "batch-op-table");
  EXPECT_THAT(blocks[1].text, HasSubstr("`mixup(alpha=1.0, num_classes)`"));
}

}  // namespace
}  // namespace stoker
