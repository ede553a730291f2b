#ifndef STOKER_DATA_RECORD_FIELDS_H_
#define STOKER_DATA_RECORD_FIELDS_H_

// A stoker shard record's pass-through fields (data/sample_fields.h), kept in the record's
// metadata section (data/shard_format.h) as a sequence of
//
//   name_len u16 | name | value_len u32 | value
//
// little-endian (common/byte_codec.h), each name at most once. A record with empty metadata has
// no fields (shards written before fields existed read as such). Thread-safe functions.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace stoker {

// (name, value) pairs of one record.
using RecordFields = std::vector<std::pair<std::string, std::string>>;

// The metadata holding `fields`. INVALID_ARGUMENT naming the field when a name is empty, longer
// than 65535 bytes or repeated, or a value is 2^32 bytes or more.
absl::StatusOr<std::string> EncodeRecordFields(const RecordFields& fields);

// Looks up `name` in `metadata`: true with `value` pointing into `metadata`, or false when the
// record has no such field. A bad-sample error (common/bad_sample.h, kCorruptRecord) when the
// metadata is not a whole sequence of fields (a length running past the end).
absl::StatusOr<bool> FindRecordField(absl::string_view metadata, absl::string_view name,
                                     absl::Span<const uint8_t>* value);

}  // namespace stoker

#endif  // STOKER_DATA_RECORD_FIELDS_H_
