// Fuzz target: dataset manifests (data/manifest.h), JSON as a manifest file or URL serves it.
//
// Input: the manifest's bytes. Invariants checked: a refusal is INVALID_ARGUMENT and never
// quotes the text; an accepted manifest's shard paths are relative, without "..".

#include "absl/strings/match.h"
#include "data/manifest.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<stoker::v1::ShardManifest> manifest =
      stoker::ParseManifest(text, "/data/manifest.json");
  if (!manifest.ok()) {
    FUZZ_CHECK(manifest.status().code() == absl::StatusCode::kInvalidArgument);
    // The message names the location and, for a bad shard path, that path; never the JSON.
    FUZZ_CHECK(text.size() < 16 || !absl::StrContains(manifest.status().message(), text));
    return 0;
  }
  for (const stoker::v1::ManifestShard& shard : manifest->shards()) {
    FUZZ_CHECK(!shard.path().empty() && shard.path()[0] != '/');
    FUZZ_CHECK(!absl::StrContains(shard.path(), ".."));
  }
  return 0;
}
