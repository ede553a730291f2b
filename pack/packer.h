#ifndef STOKER_PACK_PACKER_H_
#define STOKER_PACK_PACKER_H_

// Writes a PackPlan: the shards in parallel (one shard per thread at a time), then the manifest.
// Each record holds its image and the fields the plan's PackFields gives it (captions, COCO
// targets), which the manifest declares.
//
// Atomic and resumable: each shard is written to "<name>.tmp", fsynced and renamed; the manifest
// (written last, atomically) lists only renamed shards. A rerun with the same inputs and options
// keeps every shard already complete (an intact trailer) and writes the rest, so an interrupted
// run resumes where it stopped. Stale "*.tmp" files are overwritten.
//
// Output may be a folder or an s3:// prefix: a shard for a bucket is staged in the temporary
// folder and uploaded (multipart when large) once complete; the manifest goes up last, and a
// rerun keeps every shard object whose trailer is intact.
//
// Inputs are checked by default (pack/input_check.h): what a worker would reject is
// skipped, logged and listed by reason in the summary and the optional report. With
// resize_shorter > 0 each image is decoded (OpenCV), its shorter side scaled to that size
// when larger (area interpolation) and re-encoded as JPEG at `quality`. Otherwise files are
// stored byte for byte.

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "pack/input_check.h"
#include "pack/pack_plan.h"

namespace stoker {

// Live counters for a progress display. Thread-safe.
struct PackCounters {
  std::atomic<uint64_t> images_done{0};
  std::atomic<uint64_t> shards_done{0};
};

struct PackSummary {
  uint64_t images = 0;   // Records written or kept.
  uint64_t skipped = 0;  // Inputs that could not be read or that a worker would reject.
  std::vector<SkippedInput> skipped_inputs;  // Each, with its reason (not for reused shards).
  uint64_t shards = 0;
  uint64_t shards_reused = 0;  // Complete from an earlier run.
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  double seconds = 0;
};

// Errors: UNAVAILABLE naming the file on an I/O error (shards finished before it stay complete
// and are reused by a rerun); the options' INVALID_ARGUMENT. The summary's seconds are `clock`'s.
absl::StatusOr<PackSummary> Pack(const Storage& storage, const PackOptions& options,
                                 const PackPlan& plan, PackCounters* counters,
                                 Clock* clock = Clock::Real());

}  // namespace stoker

#endif  // STOKER_PACK_PACKER_H_
