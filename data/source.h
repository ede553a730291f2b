#ifndef STOKER_DATA_SOURCE_H_
#define STOKER_DATA_SOURCE_H_

// Where samples come from. A Source turns a dataset index into a sample (a decoded image, or the
// encoded bytes of one), a label and the values of the job's fields (pass-through and typed)
// (data/sample_fields.h).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "data/dataset_io.h"
#include "image/image.h"
#include "image/sample_input.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// One sample as a source yields it, in storage reused from sample to sample (no allocation once
// warm). Thread-compatible.
struct SampleBuffer {
  // Decoded sources: the image (reshaped by Read).
  ImageBuffer image;
  // Encoded sources: the file's bytes (resized by Read; capacity kept).
  std::vector<uint8_t> encoded;
  int64_t label = 0;
  // The values of the source's fields (CreateSource's `fields`: pass-through fields as stored,
  // typed targets in their stored form), in that order; each resized by Read, capacity kept.
  std::vector<std::vector<uint8_t>> fields;

  // The pipeline's view of this sample for a source of `format`.
  SampleInput input(const InputFormat& format) const {
    return format.encoded ? SampleInput::Encoded(encoded) : SampleInput::Decoded(image.view());
  }
};

// Thread-safe: Read may be called concurrently with different buffers.
class Source {
 public:
  virtual ~Source() = default;

  // Number of samples N.
  virtual uint64_t size() const = 0;
  // Shard boundaries of a sharded source: shard s holds [starts[s], starts[s+1]), back() == N.
  // Empty for a source without shards. The SHARD_WINDOW plan needs them (plan/epoch_plan.h).
  virtual absl::Span<const uint64_t> shard_starts() const { return {}; }
  // Whether samples are encoded, and the shape of every image when they are not.
  virtual InputFormat format() const = 0;
  // Fills `sample` (its image or its encoded bytes, per format(), its label and its pass-through
  // fields) for `index`. Errors: OUT_OF_RANGE when index >= size(); a bad-sample error
  // (common/bad_sample.h) when this sample's bytes cannot be read or it lacks a pass-through field
  // (kMissingField), so that the caller replaces it; other codes fail the batch.
  virtual absl::Status Read(uint64_t index, SampleBuffer* sample) const = 0;
  // Where sample `index` lives, for logs: e.g. "train-00003.stoker offset 1048576".
  virtual std::string Locate(uint64_t index) const = 0;
  // OK when samples of this dataset may have the field `name`; otherwise
  // INVALID_ARGUMENT saying why (without the field's position, which the caller adds). By
  // default a source has only the image and the label.
  virtual absl::Status CheckField(absl::string_view name) const;
  // What identifies the dataset's image bytes, the same in every process for the same dataset
  // (common/stable_fingerprint.h): the decoded cache's key (worker/decoded_cache.h) shares
  // entries between jobs and epochs by it. 0: unknown, nothing of this source is cached.
  virtual uint64_t fingerprint() const { return 0; }
};

// INVALID_ARGUMENT naming the field when the spec is not usable, e.g.
// "dataset.synthetic.height must be > 0".
absl::Status ValidateDatasetSpec(const stoker::v1::DatasetSpec& spec);

// Opens the dataset. `seed` is the job's seed (synthetic pixels depend on it); shards are read
// through `io` (a synthetic dataset reads nothing); `random_order` as ShardSource::Open's;
// `fields`: the fields Read fills (SourceFields of the job,
// data/sample_fields.h). Errors as ValidateDatasetSpec and ShardSource::Open; INVALID_ARGUMENT
// "fields: ..." when a synthetic dataset is asked for any (typed targets: saying where they come
// from).
absl::StatusOr<std::unique_ptr<Source>> CreateSource(const stoker::v1::DatasetSpec& spec,
                                                     uint64_t seed, const DatasetIo& io,
                                                     bool random_order = false,
                                                     std::vector<std::string> fields = {});

// Checks spec.fields (SourceFields) and that `source` may have each field it reads:
// INVALID_ARGUMENT "fields[i]: ..." otherwise.
absl::Status CheckJobFields(const stoker::v1::JobSpec& spec, const Source& source);

}  // namespace stoker

#endif  // STOKER_DATA_SOURCE_H_
