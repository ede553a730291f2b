#ifndef STOKER_TRAINER_CLIENT_BATCH_H_
#define STOKER_TRAINER_CLIENT_BATCH_H_

// A received batch: a read-only view over a ReceivedBatch (wire/batch_payload.h: the header
// parsed into a pooled message, the payload kept as it arrived). Copying a Batch shares both and
// never copies the payload. data() gathers a payload that arrived in several chunks once (the
// only copy of the tensor on the client side); a consumer that copies it elsewhere anyway reads
// payload() instead (the CUDA feeder gathers into its pinned buffer).
//
// With the job's pass-through fields (JobSpec.fields), the payload is the tensor, then the
// fields' values (BatchHeader.fields): field_value(c, i) is sample i's value of column c, a view
// into the payload (no copy). The Loader hands out only batches whose header CheckBatchHeader
// (wire/batch_check.h) accepted, so the offsets lie within the payload.
// Thread-compatible: a Batch is immutable, so const methods may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "stoker/v1/common.pb.h"
#include "wire/batch_payload.h"

namespace stoker {
// The bit pattern of one 16-bit float element (IEEE binary16 or bfloat16).
struct Float16 {
  uint16_t bits;
};
struct Bfloat16 {
  uint16_t bits;
};

class Batch {
 public:
  // An empty batch: no data, every span empty, every number 0.
  Batch() = default;
  // A whole message: the payload is message->data(), not copied.
  // REQUIRES: `message` is not modified while this Batch (or a copy) lives.
  explicit Batch(std::shared_ptr<const v1::BatchMessage> message);
  // A received batch (wire/batch_payload.h). REQUIRES: its header is not modified while this
  // Batch (or a copy) lives; its payload is set.
  explicit Batch(ReceivedBatch received);

  // The header and payload this Batch views.
  ReceivedBatch parts() const { return {message_, payload_}; }

  bool empty() const { return message_ == nullptr; }

  // The tensor bytes, densely packed in layout() order, at one address (the first call may
  // gather the received chunks: BatchPayload::contiguous()).
  const void* data() const;
  // The tensor's bytes: the payload's without field columns, those before the first column with.
  size_t size_bytes() const;
  absl::Span<const uint8_t> bytes() const;
  // The payload as received (the tensor, then any field values), for consumers that copy the
  // tensor elsewhere anyway (CopyTo of its first size_bytes()).
  const BatchPayload& payload() const;

  // Pass-through field columns, in the job's order (JobSpec.fields without "image" and "label").
  size_t num_fields() const { return static_cast<size_t>(header().fields_size()); }
  const std::string& field_name(size_t column) const;
  // The column named `name`, or -1.
  int FindField(absl::string_view name) const;
  // Sample i's value of `column`. REQUIRES: column < num_fields(), i < num_samples().
  absl::Span<const uint8_t> field_value(size_t column, size_t i) const;

  // Typed targets (columns "boxes", "box_labels", "masks", "keypoints", "semantic_mask"; moved
  // with the image by
  // the worker, in pixels of the output image; checked on receipt, wire/target_check.h). Sample
  // i's N instances (one H × W label map for a semantic mask), empty when the batch has no such
  // column. Boxes and keypoints are copied out (their values may lie unaligned in the payload);
  // masks are a view.
  // REQUIRES: i < num_samples().
  std::vector<float> boxes(size_t i) const;         // N × 4, XYXY
  std::vector<int64_t> box_labels(size_t i) const;  // N
  absl::Span<const uint8_t> masks(size_t i) const;  // N × H × W, 0 or 1
  // H × W class ids, 255 where the ops filled.
  absl::Span<const uint8_t> semantic_mask(size_t i) const;
  // N × K × 3 (x, y, visibility); *per_instance = K (0 when empty).
  std::vector<float> keypoints(size_t i, uint32_t* per_instance) const;

  // The tensor as elements of T: uint8_t for DTYPE_UINT8, float for DTYPE_FLOAT32, Float16 for
  // DTYPE_FLOAT16, Bfloat16 for DTYPE_BFLOAT16. Returns an empty span when T does not match
  // dtype().
  template <typename T>
  absl::Span<const T> elements() const {
    if (dtype() != DTypeOf<T>()) return {};
    return absl::Span<const T>(static_cast<const T*>(data()), size_bytes() / sizeof(T));
  }

  // [N, H, W, C] for LAYOUT_HWC, [N, C, H, W] for LAYOUT_CHW.
  absl::Span<const int64_t> shape() const;
  v1::DType dtype() const;
  v1::Layout layout() const;
  // One label and one dataset index per sample, in batch order.
  absl::Span<const int64_t> labels() const;
  absl::Span<const uint64_t> sample_indices() const;
  // With the pipeline's batch_mix (MixUp/CutMix): the soft labels, [num_samples(), num_classes()]
  // row-major float32, each row summing to 1; empty (and num_classes() 0) otherwise. A view over
  // the message, like the tensor.
  absl::Span<const float> soft_labels() const;
  size_t num_classes() const;
  size_t num_samples() const { return sample_indices().size(); }

  // The task: (job, epoch, global batch index). A rank r receives the global batches
  // g ≡ r (mod world_size).
  uint64_t job_id() const;
  uint32_t epoch() const;
  uint64_t batch_index() const;
  // The worker that produced the batch and the seconds it spent on it.
  uint64_t worker_id() const;
  double produce_seconds() const;

  // The header (the default instance for an empty batch).
  const v1::BatchHeader& header() const;

 private:
  template <typename T>
  static constexpr v1::DType DTypeOf() {
    static_assert(std::is_same_v<T, uint8_t> || std::is_same_v<T, float> ||
                      std::is_same_v<T, Float16> || std::is_same_v<T, Bfloat16>,
                  "elements<T>: T must be uint8_t, float, Float16 or Bfloat16");
    if constexpr (std::is_same_v<T, float>) return v1::DTYPE_FLOAT32;
    if constexpr (std::is_same_v<T, Float16>) return v1::DTYPE_FLOAT16;
    if constexpr (std::is_same_v<T, Bfloat16>) return v1::DTYPE_BFLOAT16;
    return v1::DTYPE_UINT8;
  }

  // Sample i's value of the column named `field`; empty without one.
  absl::Span<const uint8_t> TargetBytes(absl::string_view field, size_t i) const;

  std::shared_ptr<const v1::BatchMessage> message_;  // the header; null when empty()
  std::shared_ptr<const BatchPayload> payload_;      // null when empty()
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_BATCH_H_
