// Fuzz target: the WebDataset tar reader (data/tar_reader.h) on an arbitrary archive: ustar, GNU
// and pax headers, long names, .cls labels, and the end of the scan at damage.
//
// Input: the tar file's bytes. Invariants checked: loading an in-memory file never fails (damage
// is reported in the index); every sample's bytes lie inside the file; one key per sample.

#include "data/tar_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stoker::fuzz::MemoryFile file(absl::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<std::string> keys;
  absl::StatusOr<stoker::ShardIndex> index = stoker::LoadTarShardIndex(file, &keys);
  FUZZ_CHECK(index.ok());
  FUZZ_CHECK(keys.size() == index->samples.size());
  for (const stoker::SampleLocation& sample : index->samples) {
    FUZZ_CHECK(sample.offset <= size && sample.length <= size - sample.offset);
  }
  return 0;
}
