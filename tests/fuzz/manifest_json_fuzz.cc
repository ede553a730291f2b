// Fuzz target: dataset manifests (data/manifest.h), JSON as a manifest file or URL serves it.
//
// Input: the manifest's bytes. Invariants checked: a refusal is INVALID_ARGUMENT with one of the
// two messages manifest.cc makes (never the parser's, which can quote the text); an accepted
// manifest's shard paths are relative, without ".."; whatever the fast parser
// (data/manifest_json.h) accepts, protobuf's JSON parser accepts as the same message.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "data/manifest.h"
#include "data/manifest_json.h"
#include "google/protobuf/util/json_util.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (const std::optional<stoker::v1::ShardManifest> fast = stoker::ParseManifestFast(text)) {
    stoker::v1::ShardManifest slow;
    FUZZ_CHECK(google::protobuf::util::JsonStringToMessage(text, &slow).ok());
    FUZZ_CHECK(slow.SerializeAsString() == fast->SerializeAsString());
  }
  absl::StatusOr<stoker::v1::ShardManifest> manifest =
      stoker::ParseManifest(text, "/data/manifest.json");
  if (!manifest.ok()) {
    FUZZ_CHECK(manifest.status().code() == absl::StatusCode::kInvalidArgument);
    // The message is one of two fixed forms: the location and the size, or a bad shard path
    // (the path only, never the JSON around it).
    const absl::string_view message = manifest.status().message();
    FUZZ_CHECK(message == absl::StrCat("manifest /data/manifest.json is not a JSON ShardManifest (",
                                       text.size(), " bytes)") ||
               (absl::StartsWith(message, "manifest /data/manifest.json: shards[") &&
                absl::StrContains(message, "].path must be a relative path, got \"")));
    return 0;
  }
  for (const stoker::v1::ManifestShard& shard : manifest->shards()) {
    FUZZ_CHECK(!shard.path().empty() && shard.path()[0] != '/');
    FUZZ_CHECK(!absl::StrContains(shard.path(), ".."));
  }
  return 0;
}
