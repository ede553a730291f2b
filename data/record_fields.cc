#include "data/record_fields.h"

#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/byte_codec.h"

namespace stoker {

absl::StatusOr<std::string> EncodeRecordFields(const RecordFields& fields) {
  std::string out;
  std::set<absl::string_view> seen;
  for (const auto& [name, value] : fields) {
    if (name.empty() || name.size() > std::numeric_limits<uint16_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", name.substr(0, 64), "\": the name must be 1 to 65535 bytes"));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("field \"", name, "\": named twice"));
    }
    if (value.size() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("field \"", name, "\": a value of ",
                                                     value.size(), " bytes (at most 2^32-1)"));
    }
    AppendLittleEndian(static_cast<uint16_t>(name.size()), &out);
    out.append(name);
    AppendLittleEndian(static_cast<uint32_t>(value.size()), &out);
    out.append(value);
  }
  return out;
}

absl::StatusOr<bool> FindRecordField(absl::string_view metadata, absl::string_view name,
                                     absl::Span<const uint8_t>* value) {
  ByteReader reader(AsBytes(metadata));
  while (reader.remaining() > 0) {
    uint16_t name_size = 0;
    uint32_t value_size = 0;
    absl::Span<const uint8_t> found_name, found_value;
    if (!reader.Read(&name_size) || !reader.ReadBytes(name_size, &found_name) ||
        !reader.Read(&value_size) || !reader.ReadBytes(value_size, &found_value)) {
      return BadSampleError(BadSampleReason::kCorruptRecord,
                            absl::StrCat("record metadata: a field runs past the metadata's ",
                                         metadata.size(), " bytes at offset ", reader.position()));
    }
    if (AsBytes(name) == found_name) {
      *value = found_value;
      return true;
    }
  }
  return false;
}

}  // namespace stoker
