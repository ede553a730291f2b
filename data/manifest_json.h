#ifndef STOKER_DATA_MANIFEST_JSON_H_
#define STOKER_DATA_MANIFEST_JSON_H_

// A fast parser for the JSON of a ShardManifest in the plain form WriteManifest prints (and most
// hand-written manifests use): protobuf's JSON parser takes about a second for 100,000 shards,
// this one a few tens of milliseconds. It accepts only a strict subset: an object with the keys
// version, shards, classNames / class_names and fields, each at most once; shards objects with
// path, records and bytes, each at most once; integers as bare digits or digits in quotes; strings
// of printable ASCII without escapes. Anything else (escapes, non-ASCII, null, exponents, unknown
// keys, ...) gives nullopt, and ParseManifest falls back to protobuf's parser, whose verdict
// then decides: on what this parser accepts, both parsers agree.

#include <optional>

#include "absl/strings/string_view.h"
#include "stoker/v1/manifest.pb.h"

namespace stoker {

std::optional<stoker::v1::ShardManifest> ParseManifestFast(absl::string_view text);

}  // namespace stoker

#endif  // STOKER_DATA_MANIFEST_JSON_H_
