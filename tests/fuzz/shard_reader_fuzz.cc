// Fuzz target: the stoker shard reader (data/shard_reader.h) on an arbitrary file: the trailer
// and index, the recovery scan of a damaged shard, and every reachable record's parse.
//
// Input: the shard file's bytes. Invariants checked: loading an in-memory file never fails (damage
// is reported in the index, not as an error); every sample lies inside the file; a record that
// does not parse is a bad-sample DATA_LOSS; a parsed record's data lies inside the record; its
// metadata's fields (data/record_fields.h) are found inside the metadata, or refused as a bad
// sample.

#include "common/bad_sample.h"
#include "data/record_fields.h"
#include "data/shard_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stoker::fuzz::MemoryFile file(absl::string_view(reinterpret_cast<const char*>(data), size));
  absl::StatusOr<stoker::ShardIndex> index = stoker::LoadStokerShardIndex(file);
  FUZZ_CHECK(index.ok());
  std::vector<uint8_t> record;
  for (const stoker::SampleLocation& sample : index->samples) {
    FUZZ_CHECK(sample.offset <= size && sample.length <= size - sample.offset);
    record.resize(sample.length);
    FUZZ_CHECK(file.ReadAt(sample.offset, sample.length, record.data()).ok());
    stoker::RecordView view;
    const absl::Status parsed = stoker::ParseRecord(record, &view);
    if (!parsed.ok()) {
      FUZZ_CHECK(parsed.code() == absl::StatusCode::kDataLoss);
      continue;
    }
    FUZZ_CHECK(view.data_offset <= record.size() &&
               view.data_size <= record.size() - view.data_offset);
    for (const char* name : {"text", "json"}) {
      absl::Span<const uint8_t> value;
      const absl::StatusOr<bool> found = stoker::FindRecordField(view.metadata, name, &value);
      if (!found.ok()) {
        FUZZ_CHECK(stoker::BadSampleReasonOf(found.status()) ==
                   stoker::BadSampleReason::kCorruptRecord);
        continue;
      }
      const auto* metadata = reinterpret_cast<const uint8_t*>(view.metadata.data());
      FUZZ_CHECK(!*found || (value.data() >= metadata &&
                             value.data() + value.size() <= metadata + view.metadata.size()));
    }
  }
  return 0;
}
