#ifndef STOKER_DATA_STORAGE_FLAGS_H_
#define STOKER_DATA_STORAGE_FLAGS_H_

// The storage flags every binary that reads datasets shares (--data-root, --s3-*, the worker's
// --cache-* and open-shard limits): parsed in main.cc, then Build makes the Storage
// (data/storage_backend.h) that main hands on (stoker-pack), and BuildDatasetIo that storage
// with an OpenShardPool (data/open_shards.h) of the flags' limits, for main to hand to what opens
// sources (the worker, the coordinator; data/dataset_io.h).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/flags.h"
#include "data/dataset_io.h"
#include "data/open_shards.h"

namespace stoker {

class Storage;  // data/storage_backend.h

// The storage flags of a binary (worker, coordinator, stoker-pack), over the environment.
// Thread-compatible.
struct StorageFlags {
  std::string s3_endpoint;  // --s3-endpoint; empty: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL.
  std::string s3_region;    // --s3-region; empty: AWS_REGION / AWS_DEFAULT_REGION.
  std::string s3_addressing = "auto";         // --s3-addressing: auto, path or virtual.
  std::string cache_dir;                      // --cache-dir (with_cache only).
  uint64_t cache_bytes = uint64_t{10} << 30;  // --cache-bytes.
  std::vector<std::string> data_roots;        // --data-root, repeatable, required.
  OpenShardLimits open_shards;  // --max-open-shards, --shard-index-bytes (with_cache only).

  void AddTo(FlagSet* flags, bool with_cache);
  // The storage the flags describe, for main to hand to what reads and writes datasets.
  // INVALID_ARGUMENT naming the flag, and naming --data-root when none is given (the binaries
  // then exit 2, as without TLS files).
  absl::StatusOr<std::shared_ptr<Storage>> Build() const;
  // The storage (Build) and an open-shard pool of open_shards' limits, for main to hand to what
  // opens sources. Errors as Build's.
  absl::StatusOr<DatasetIo> BuildDatasetIo() const;
};

}  // namespace stoker

#endif  // STOKER_DATA_STORAGE_FLAGS_H_
