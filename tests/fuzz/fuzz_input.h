#ifndef STOKER_TESTS_FUZZ_FUZZ_INPUT_H_
#define STOKER_TESTS_FUZZ_FUZZ_INPUT_H_

// What the fuzz targets (tests/fuzz/*_fuzz.cc) share: the entry point libFuzzer calls, a
// framing that turns one input into several byte strings, and a RandomAccessFile over an input.
// Each target defines LLVMFuzzerTestOneInput; it is linked either with libFuzzer (STOKER_FUZZ,
// scripts/fuzz.sh) or with replay_main.cc, which feeds it every file of a corpus (CTest label
// fuzz). A target returns 0 for every input; a bug shows as a sanitizer report, a CHECK of the
// target's own (FUZZ_CHECK) or a crash.
//
// Thread-compatible helpers.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "data/storage.h"
#include "google/protobuf/stubs/logging.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// An invariant the target checks on the code under test: on failure, prints it and aborts
// (libFuzzer saves the input; the replay test fails).
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace stoker::fuzz {

// Splits `input` into at most `max_chunks` strings framed as [u16 little-endian length][bytes];
// a length past the end takes what is left. The seed generator (make_seeds.cc) writes this
// framing with JoinChunks.
inline std::vector<absl::string_view> SplitChunks(absl::string_view input, size_t max_chunks) {
  std::vector<absl::string_view> chunks;
  while (input.size() >= 2 && chunks.size() < max_chunks) {
    const size_t length = static_cast<uint8_t>(input[0]) | (static_cast<uint8_t>(input[1]) << 8);
    input.remove_prefix(2);
    const size_t take = length < input.size() ? length : input.size();
    chunks.push_back(input.substr(0, take));
    input.remove_prefix(take);
  }
  return chunks;
}

inline std::string JoinChunks(const std::vector<std::string>& chunks) {
  std::string out;
  for (const std::string& chunk : chunks) {
    out.push_back(static_cast<char>(chunk.size() & 0xff));
    out.push_back(static_cast<char>((chunk.size() >> 8) & 0xff));
    out.append(chunk.substr(0, 0xffff));
  }
  return out;
}

// Drops protobuf's log lines (e.g. "invalid UTF-8" for every mutated string field): they say
// nothing about the input's outcome and slow fuzzing down. Call once per process.
inline void QuietProtobufLogs() {
  static const bool done = (google::protobuf::SetLogHandler(nullptr), true);
  (void)done;
}

// The fuzz input as a file. Thread-safe (immutable).
class MemoryFile : public RandomAccessFile {
 public:
  explicit MemoryFile(absl::string_view bytes) : name_("fuzz-input"), bytes_(bytes) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    if (absl::Status range = CheckReadRange(name_, bytes_.size(), offset, n); !range.ok()) {
      return range;
    }
    if (n > 0) std::memcpy(out, bytes_.data() + offset, n);
    return absl::OkStatus();
  }

 private:
  const std::string name_;
  const absl::string_view bytes_;
};

}  // namespace stoker::fuzz

#endif  // STOKER_TESTS_FUZZ_FUZZ_INPUT_H_
