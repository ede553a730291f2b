#ifndef STOKER_DATA_STORAGE_BACKEND_H_
#define STOKER_DATA_STORAGE_BACKEND_H_

// Storage: where datasets are read from and written to (local files, S3, HTTP), with the S3
// endpoint and credential chain, the data roots and the optional shard cache. A binary builds
// it from its flags once in main.cc (StorageFlags, data/storage_flags.h) and hands it to what
// reads or writes datasets: by reference to manifests and stoker-pack, inside a DatasetIo
// (data/dataset_io.h) to the sources.
//
// Remote files (S3, HTTP) go through the cache when there is one; local files never do.

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "data/aws_credentials.h"
#include "data/data_roots.h"
#include "data/http_file.h"
#include "data/s3_client.h"
#include "data/s3_config.h"
#include "data/shard_cache.h"
#include "data/storage.h"
#include "prometheus/collectable.h"

namespace stoker {

struct StorageOptions {
  S3Config s3;
  ShardCacheOptions cache;  // cache.dir empty: no cache.
  // Where datasets may be read from (data/data_roots.h); empty: anywhere (the binaries require
  // at least one: StorageFlags::Build).
  std::vector<std::string> data_roots;

  // Errors of S3Config::Validate and, with a cache dir, ShardCacheOptions::Validate.
  absl::Status Validate() const;
};

// Thread-safe.
class Storage {
 public:
  // Errors: Validate's; the cache folder's UNAVAILABLE.
  static absl::StatusOr<std::shared_ptr<Storage>> Create(const StorageOptions& options,
                                                         AwsEnvironment env);
  // A storage from the process environment alone (AWS_ENDPOINT_URL, AWS_REGION, the credential
  // chain of data/aws_credentials.h; a malformed endpoint makes s3:// locations fail with its
  // error), without a cache or data roots: for tests, benchmarks and the trainer's hybrid
  // producer (DatasetIo::FromEnvironment).
  static std::shared_ptr<Storage> FromEnvironment();

  // See data/storage.h. Open, ReadAll and List first check the location against the data roots
  // (DataRoots::Check's errors), before any I/O; Write does not (stoker-pack's output).
  absl::Status CheckLocation(const std::string& location) const { return roots_.Check(location); }
  // True when every location is allowed (no roots, or the root "/").
  bool unrestricted_roots() const { return roots_.unrestricted(); }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> Open(
      const std::string& location, RemoteReads reads = RemoteReads::kWholeShard) const;
  absl::StatusOr<std::string> ReadAll(const std::string& location) const;
  absl::Status Write(const std::string& location, absl::Span<const uint8_t> data) const;
  absl::StatusOr<std::vector<StorageEntry>> List(const std::string& prefix) const;

  S3Client& s3() const { return *s3_; }
  ShardCache* cache() const { return cache_.get(); }

  // Read amplification (stoker_read_amplification): bytes read from remote stores (cache fills
  // and ranged reads, shard indexes included) against the bytes of the samples sources read.
  uint64_t fetched_bytes() const { return fetched_bytes_->load(std::memory_order_relaxed); }
  uint64_t sample_bytes() const { return sample_bytes_.load(std::memory_order_relaxed); }
  void CountSampleBytes(uint64_t n) { sample_bytes_.fetch_add(n, std::memory_order_relaxed); }

 private:
  Storage(std::shared_ptr<S3Client> s3, std::unique_ptr<ShardCache> cache, DataRoots roots)
      : s3_(std::move(s3)), cache_(std::move(cache)), roots_(std::move(roots)) {}

  // Redirects are followed only when no data root limits where data may come from.
  HttpOptions HttpOptionsForRoots() const {
    HttpOptions options;
    options.follow_redirects = roots_.unrestricted();
    return options;
  }

  const std::shared_ptr<S3Client> s3_;
  const std::unique_ptr<ShardCache> cache_;
  const DataRoots roots_;
  // Shared with the open remote files, which may outlive the storage.
  const std::shared_ptr<std::atomic<uint64_t>> fetched_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  std::atomic<uint64_t> sample_bytes_{0};
};

// stoker_shard_cache_*, stoker_s3_requests_total and the read amplification of `storage`: the
// one its process reads datasets through (docs/metrics.md). Thread-safe.
class StorageMetrics : public prometheus::Collectable {
 public:
  explicit StorageMetrics(std::shared_ptr<const Storage> storage) : storage_(std::move(storage)) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::shared_ptr<const Storage> storage_;
};

}  // namespace stoker

#endif  // STOKER_DATA_STORAGE_BACKEND_H_
