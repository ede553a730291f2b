#ifndef STOKER_DATA_TESTING_SHARD_FIXTURES_H_
#define STOKER_DATA_TESTING_SHARD_FIXTURES_H_

// Test helpers: temporary directories, free loopback ports, small shards and tars with known
// contents.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/v1/manifest.pb.h"

namespace stoker {
namespace testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The bytes of sample `i` of the fixtures: distinct per index, a few hundred bytes.
std::string SampleBytes(uint64_t i);

// Writes a stoker shard with samples first..first+count-1 (key "k<i>", label i % 10, data
// SampleBytes(i)); fails the test on error.
void WriteTestShard(const std::string& path, uint64_t first, uint64_t count);

// Writes `shards` shards of `per_shard` samples ("shard-0000<s>.stoker") and a manifest
// (manifest.json) with class names "c0".."c9" into `dir`; returns the manifest path.
std::string WriteTestDataset(const std::string& dir, int shards, uint64_t per_shard);

// Flips a bit of a data byte near the end of record `record` of the stoker shard at `path`, so
// that its CRC no longer matches.
void CorruptShardRecord(const std::string& path, uint64_t record);

// One file of a tar archive.
struct TarEntry {
  std::string name;
  std::string data;
};
// Writes a ustar archive (names up to 100 bytes) with its end marker.
void WriteTar(const std::string& path, const std::vector<TarEntry>& entries);

// A TCP port the kernel just gave out on 127.0.0.1, released for a child process to bind.
int FreeLoopbackPort();

// Reads or rewrites a whole file.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace testing
}  // namespace stoker

#endif  // STOKER_DATA_TESTING_SHARD_FIXTURES_H_
