#include "data/manifest_json.h"

#include <string>

#include "data/manifest.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

// protobuf's verdict on `text`: the manifest, or nullopt when it refuses it.
std::optional<stoker::v1::ShardManifest> ParseWithProtobuf(const std::string& text) {
  stoker::v1::ShardManifest manifest;
  if (!google::protobuf::util::JsonStringToMessage(text, &manifest).ok()) return std::nullopt;
  return manifest;
}

TEST(ManifestJsonTest, ReadsWhatWriteManifestPrintsAsProtobufDoes) {
  stoker::v1::ShardManifest manifest;
  manifest.set_version(1);
  for (int i = 0; i < 3; ++i) {
    stoker::v1::ManifestShard* shard = manifest.add_shards();
    shard->set_path("shard-0000" + std::to_string(i) + ".stoker");
    shard->set_records(10 + i);
    shard->set_bytes(uint64_t{1} << (40 + i));
  }
  manifest.add_class_names("cat");
  manifest.add_class_names("dog house");
  manifest.add_fields("text");
  manifest.add_fields("seg.png");
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(manifest, &json, options).ok());
  const std::optional<stoker::v1::ShardManifest> fast = ParseManifestFast(json);
  ASSERT_TRUE(fast.has_value()) << json;
  EXPECT_EQ(fast->SerializeAsString(), manifest.SerializeAsString());
}

TEST(ManifestJsonTest, AcceptedVariantsAgreeWithProtobuf) {
  for (const std::string text : {
           R"({})",
           R"({"version": 1, "shards": [], "class_names": []})",
           R"({"shards":[{"path":"a.tar","records":"18446744073709551615","bytes":0}]})",
           " {\n\t\"shards\" : [ { \"records\" : 3 , \"path\" : \"x/y.stoker\" } ] }\r\n",
           R"({"classNames": ["a", ""], "version": "4294967295"})",
           R"({"fields": ["text"], "shards": []})",
       }) {
    const std::optional<stoker::v1::ShardManifest> fast = ParseManifestFast(text);
    const std::optional<stoker::v1::ShardManifest> slow = ParseWithProtobuf(text);
    ASSERT_TRUE(fast.has_value()) << text;
    ASSERT_TRUE(slow.has_value()) << text;
    EXPECT_EQ(fast->SerializeAsString(), slow->SerializeAsString()) << text;
  }
}

TEST(ManifestJsonTest, LeavesEverythingElseToProtobuf) {
  for (const std::string text : {
           R"()",
           R"([])",
           R"({"shards": [{"path": "a\u0062.stoker", "records": 1}]})",
           R"({"shards": null})",
           R"({"version": 1, "version": 1})",
           R"({"classNames": [], "class_names": []})",
           R"({"shards": [{"records": 1e3}]})",
           R"({"shards": [{"records": 01}]})",
           R"({"shards": [{"records": -1}]})",
           R"({"shards": [{"records": 18446744073709551616}]})",
           R"({"version": 4294967296})",
           R"({"unknown": 1})",
           R"({"version": 1,})",
           R"({"version": 1} x)",
           "{\"classNames\": [\"caf\xc3\xa9\"]}",
       }) {
    EXPECT_FALSE(ParseManifestFast(text).has_value()) << text;
  }
}

TEST(ManifestJsonTest, ParseManifestFallsBackToProtobuf) {
  // An escape: protobuf's parser reads it.
  auto escaped = ParseManifest(R"({"shards": [{"path": "a\u0062.stoker", "records": 1}]})", "m");
  ASSERT_TRUE(escaped.ok()) << escaped.status();
  EXPECT_EQ(escaped->shards(0).path(), "ab.stoker");
  // Refused by both: the same error as before.
  const std::string bad = R"({"version": "x"})";
  EXPECT_EQ(ParseManifest(bad, "m").status(),
            absl::InvalidArgumentError("manifest m is not a JSON ShardManifest (16 bytes)"));
}

}  // namespace
}  // namespace stoker
