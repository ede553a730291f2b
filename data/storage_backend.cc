#include "data/storage_backend.h"

#include "absl/strings/str_cat.h"
#include "common/metric_family_builder.h"
#include "common/status_macros.h"
#include "data/http_file.h"

namespace stoker {
namespace {

// A remote file that adds the bytes it reads to a counter.
class CountingFile : public RandomAccessFile {
 public:
  CountingFile(std::unique_ptr<RandomAccessFile> file,
               std::shared_ptr<std::atomic<uint64_t>> counter)
      : file_(std::move(file)), counter_(std::move(counter)) {}
  const std::string& name() const override { return file_->name(); }
  uint64_t size() const override { return file_->size(); }
  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    absl::Status status = file_->ReadAt(offset, n, out);
    if (status.ok()) counter_->fetch_add(n, std::memory_order_relaxed);
    return status;
  }

 private:
  const std::unique_ptr<RandomAccessFile> file_;
  const std::shared_ptr<std::atomic<uint64_t>> counter_;
};

}  // namespace

absl::Status StorageOptions::Validate() const {
  RETURN_IF_ERROR(s3.Validate());
  if (!cache.dir.empty()) RETURN_IF_ERROR(cache.Validate());
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Storage>> Storage::Create(const StorageOptions& options,
                                                         AwsEnvironment env) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(DataRoots roots, DataRoots::Create(options.data_roots));
  std::unique_ptr<ShardCache> cache;
  if (!options.cache.dir.empty()) {
    ASSIGN_OR_RETURN(cache, ShardCache::Open(options.cache));
  }
  Clock* clock = env.clock;
  HttpTransport* http = env.http;
  auto s3 = std::make_shared<S3Client>(
      options.s3, std::make_shared<AwsCredentialChain>(std::move(env)), http, clock);
  return std::shared_ptr<Storage>(new Storage(std::move(s3), std::move(cache), std::move(roots)));
}

std::shared_ptr<Storage> Storage::FromEnvironment() {
  AwsEnvironment env = AwsEnvironment::Real();
  StorageOptions options;
  options.s3 = S3Config::FromEnvironment(env.getenv);
  absl::StatusOr<std::shared_ptr<Storage>> made = Create(options, env);
  if (!made.ok()) {  // A malformed AWS_ENDPOINT_URL: S3 locations then fail with its error.
    options.s3 = S3Config();
    made = Create(options, env);
  }
  return *std::move(made);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> Storage::Open(const std::string& location,
                                                                RemoteReads reads) const {
  RETURN_IF_ERROR(CheckLocation(location));
  ASSIGN_OR_RETURN(StorageScheme scheme, SchemeOf(location));
  if (scheme == StorageScheme::kLocal) return OpenLocalFile(location);
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> remote,
                   scheme == StorageScheme::kS3 ? OpenS3File(s3_, location)
                                                : OpenHttpFile(location, HttpOptionsForRoots()));
  auto file = std::make_unique<CountingFile>(std::move(remote), fetched_bytes_);
  if (cache_ == nullptr || reads == RemoteReads::kRanged) return file;
  return cache_->Get(std::move(file));
}

absl::StatusOr<std::string> Storage::ReadAll(const std::string& location) const {
  RETURN_IF_ERROR(CheckLocation(location));
  ASSIGN_OR_RETURN(StorageScheme scheme, SchemeOf(location));
  if (scheme == StorageScheme::kS3) {  // One GET: its error names a missing bucket.
    ASSIGN_OR_RETURN(S3Location object, ParseS3Url(location));
    return s3_->Get(object);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                   scheme == StorageScheme::kLocal ? OpenLocalFile(location)
                                                   : OpenHttpFile(location, HttpOptionsForRoots()));
  std::string text(file->size(), '\0');
  RETURN_IF_ERROR(file->ReadAt(0, text.size(), reinterpret_cast<uint8_t*>(text.data())));
  return text;
}

absl::Status Storage::Write(const std::string& location, absl::Span<const uint8_t> data) const {
  ASSIGN_OR_RETURN(StorageScheme scheme, SchemeOf(location));
  if (scheme == StorageScheme::kLocal) return WriteLocalFile(location, data);
  if (scheme == StorageScheme::kS3) {
    ASSIGN_OR_RETURN(S3Location object, ParseS3Url(location));
    return s3_->Put(object, data);
  }
  return absl::UnimplementedError(absl::StrCat("cannot write to ", location, " over HTTP"));
}

absl::StatusOr<std::vector<StorageEntry>> Storage::List(const std::string& prefix) const {
  RETURN_IF_ERROR(CheckLocation(prefix));
  ASSIGN_OR_RETURN(StorageScheme scheme, SchemeOf(prefix));
  if (scheme == StorageScheme::kLocal) return ListLocalFolder(prefix);
  if (scheme == StorageScheme::kHttp) {
    return absl::UnimplementedError(absl::StrCat("cannot list ", prefix, ": HTTP has no listing"));
  }
  ASSIGN_OR_RETURN(S3Location location, ParseS3Url(prefix));
  ASSIGN_OR_RETURN(std::vector<S3Object> objects, s3_->List(location));
  std::vector<StorageEntry> entries;
  for (S3Object& object : objects) {
    entries.push_back(
        StorageEntry{absl::StrCat("s3://", location.bucket, "/", object.key), object.size});
  }
  return entries;
}

std::vector<prometheus::MetricFamily> StorageMetrics::Collect() const {
  const Storage& storage = *storage_;
  MetricFamilyBuilder builder;
  builder.Counter("stoker_s3_requests_total", "S3 requests sent (retries included).",
                  static_cast<double>(storage.s3().requests()));
  const uint64_t fetched = storage.fetched_bytes(), used = storage.sample_bytes();
  builder.Counter("stoker_remote_fetched_bytes_total",
                  "Bytes read from S3 and HTTP (cache fills, ranged reads, shard indexes).",
                  static_cast<double>(fetched));
  builder.Counter("stoker_sample_bytes_total", "Bytes of the samples read from shards.",
                  static_cast<double>(used));
  builder.Gauge("stoker_read_amplification",
                "Remote bytes fetched / bytes of samples read since the process started (0 "
                "before any sample; local data fetches nothing).",
                used == 0 ? 0.0 : static_cast<double>(fetched) / used);
  if (const ShardCache* cache = storage.cache()) {
    const ShardCacheStats stats = cache->stats();
    builder.Counter("stoker_shard_cache_hits_total", "Shard opens served from the local cache.",
                    static_cast<double>(stats.hits));
    builder.Counter("stoker_shard_cache_misses_total",
                    "Shard opens that copied the shard into the cache.",
                    static_cast<double>(stats.misses));
    builder.Counter("stoker_shard_cache_uncacheable_total",
                    "Shard opens of shards larger than the whole cache (read remotely).",
                    static_cast<double>(stats.uncacheable));
    builder.Counter("stoker_shard_cache_evictions_total", "Cache entries deleted to make room.",
                    static_cast<double>(stats.evictions));
    builder.Counter("stoker_shard_cache_corrupt_total",
                    "Cache entries whose checksum was wrong (deleted and fetched again).",
                    static_cast<double>(stats.corrupt));
    builder.Counter("stoker_shard_cache_fill_bytes_total", "Bytes copied into the cache.",
                    static_cast<double>(stats.bytes_filled));
    const uint64_t opens = stats.hits + stats.misses + stats.uncacheable;
    builder.Gauge("stoker_shard_cache_hit_ratio", "hits / opens since the process started.",
                  opens == 0 ? 0.0 : static_cast<double>(stats.hits) / opens);
    builder.Gauge("stoker_shard_cache_bytes", "Bytes of cache entries on disk.",
                  static_cast<double>(cache->DiskBytes()));
  }
  return builder.Take();
}

}  // namespace stoker
