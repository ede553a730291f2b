#ifndef STOKER_COMMON_PAYLOAD_CODEC_H_
#define STOKER_COMMON_PAYLOAD_CODEC_H_

// Batch payload compression on the wire (proto/stoker/v1/worker.proto, CompressionChoice):
// one LZ4 frame or one zstd frame, each carrying the content size and a content checksum, so a
// corrupt or truncated payload is detected (DATA_LOSS), never decoded into garbage.
//
// The codecs keep one compression / decompression context per thread (thread_local), so steady
// state allocates nothing per batch. Every function here is thread-safe.
//
//   PayloadBuffer wire;
//   RETURN_IF_ERROR(CompressPayload(choice, raw, &wire));          // worker, producer thread
//   ...
//   RETURN_IF_ERROR(DecompressPayload(codec, encoded, out_span));  // client, into its buffer

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {

// zstd levels a CompressionChoice may name (0 means kDefaultZstdLevel).
inline constexpr int kMinZstdLevel = -7;
inline constexpr int kMaxZstdLevel = 19;
inline constexpr int kDefaultZstdLevel = 1;

// True for COMPRESSION_NONE and COMPRESSION_UNSPECIFIED (raw payloads).
bool IsRaw(v1::Compression codec);

// "none", "lz4", "zstd" or "zstd:LEVEL" (LEVEL in kMinZstdLevel..kMaxZstdLevel). Anything else
// is INVALID_ARGUMENT naming `field` and the accepted names.
absl::StatusOr<v1::CompressionChoice> ParseCompressionChoice(absl::string_view text,
                                                             absl::string_view field);
// The name ParseCompressionChoice reads back ("zstd:3"; "zstd" for the default level).
std::string CompressionChoiceName(const v1::CompressionChoice& choice);
// A codec name: "none", "lz4", "zstd" ("unknown(N)" for a value outside the enum).
std::string CodecName(v1::Compression codec);
// INVALID_ARGUMENT naming `field` (".codec" or ".level" appended) for a codec outside the enum
// or a level outside the codec's range.
absl::Status ValidateCompressionChoice(const v1::CompressionChoice& choice,
                                       absl::string_view field);

// A byte buffer that grows without zero-filling and keeps its capacity: the worker compresses
// into one per batch in flight (pooled), and the wire sends its first size() bytes.
// Thread-compatible.
class PayloadBuffer {
 public:
  uint8_t* data() { return bytes_.get(); }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Makes room for `n` bytes; contents are not kept when it grows.
  void Reserve(size_t n);
  // REQUIRES: n <= capacity().
  void set_size(size_t n) { size_ = n; }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

// Encodes `raw` as `choice` says into `out` (replacing its contents).
// REQUIRES: ValidateCompressionChoice(choice) is OK and the codec is not raw.
// INTERNAL if the codec library fails (it does not for valid arguments).
absl::Status CompressPayload(const v1::CompressionChoice& choice, absl::Span<const uint8_t> raw,
                             PayloadBuffer* out);

// Decodes `encoded`, one frame of `codec`, into `out`, which is exactly the decoded size the
// sender announced. DATA_LOSS when the frame is corrupt, truncated, followed by other bytes,
// fails its checksum, or decodes to another size; INVALID_ARGUMENT for a raw or unknown codec.
absl::Status DecompressPayload(v1::Compression codec, absl::Span<const uint8_t> encoded,
                               absl::Span<uint8_t> out);

}  // namespace stoker

#endif  // STOKER_COMMON_PAYLOAD_CODEC_H_
