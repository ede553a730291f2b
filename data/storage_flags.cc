#include "data/storage_flags.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "data/storage_backend.h"

namespace stoker {

void StorageFlags::AddTo(FlagSet* flags, bool with_cache) {
  flags->Add(
      "s3-endpoint", &s3_endpoint,
      "S3-compatible endpoint, e.g. http://minio:9000 (default: AWS_ENDPOINT_URL, else AWS)");
  flags->Add("s3-region", &s3_region, "S3 region (default: AWS_REGION, else us-east-1)");
  flags->Add("s3-addressing", &s3_addressing,
             "auto (virtual-hosted on AWS, path-style elsewhere), path or virtual");
  flags->Add("data-root", &data_roots,
             "required, repeatable: read datasets only under this folder or URL prefix "
             "(s3://bucket/prefix/, https://host/path/); --data-root=/ allows every path and URL");
  if (!with_cache) return;
  flags->Add("cache-dir", &cache_dir,
             "worker-local shard cache folder for s3:// and http(s):// shards (empty = none)");
  flags->Add("cache-bytes", &cache_bytes, "shard cache budget in bytes (LRU beyond it)");
  flags->Add("max-open-shards", &open_shards.max_open,
             "shards held open and indexed at once, shared by all jobs (LRU beyond it)");
  flags->Add("shard-index-bytes", &open_shards.index_bytes,
             "bytes of record indexes of the open shards, about 24 a record (LRU beyond it)");
}

absl::StatusOr<std::shared_ptr<Storage>> StorageFlags::Build() const {
  AwsEnvironment env = AwsEnvironment::Real();
  StorageOptions options;
  options.s3 = S3Config::FromEnvironment(env.getenv);
  if (!s3_endpoint.empty()) options.s3.endpoint = s3_endpoint;
  if (!s3_region.empty()) options.s3.region = s3_region;
  if (s3_addressing == "path") {
    options.s3.addressing = S3Config::Addressing::kPath;
  } else if (s3_addressing == "virtual") {
    options.s3.addressing = S3Config::Addressing::kVirtualHosted;
  } else if (s3_addressing != "auto") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--s3-addressing: must be auto, path or virtual, got \"", s3_addressing, "\""));
  }
  if (absl::Status limits = open_shards.Validate(); !limits.ok()) {
    // Field names to flag names: max_open_shards -> --max-open-shards.
    std::string message(limits.message());
    std::replace(message.begin(), message.end(), '_', '-');
    return absl::InvalidArgumentError(absl::StrCat("--", message));
  }
  options.cache.dir = cache_dir;
  options.cache.max_bytes = cache_bytes;
  // Required, as TLS is (--insecure): reading anything must be asked for (--data-root=/).
  if (data_roots.empty()) {
    return absl::InvalidArgumentError(
        "--data-root: required (repeatable): the folders and URL prefixes jobs may read; "
        "--data-root=/ allows every path and URL");
  }
  options.data_roots = data_roots;
  absl::StatusOr<std::shared_ptr<Storage>> storage = Storage::Create(options, std::move(env));
  if (!storage.ok()) {
    // Field names to flag names: "s3.endpoint" -> --s3-endpoint, "cache_bytes" -> --cache-bytes.
    std::string message(storage.status().message());
    for (const auto& [field, flag] :
         {std::pair<std::string, std::string>{"s3.endpoint", "--s3-endpoint"},
          {"cache_dir", "--cache-dir"},
          {"cache_bytes", "--cache-bytes"},
          {"data_roots", "--data-root"}}) {
      if (message.rfind(field, 0) == 0) message = flag + message.substr(field.size());
    }
    return absl::Status(storage.status().code(), message);
  }
  if ((*storage)->unrestricted_roots()) {
    STOKER_LOG(WARNING) << "--data-root=/: jobs may read datasets from any path or URL this "
                           "process can reach";
  }
  return storage;
}

absl::StatusOr<DatasetIo> StorageFlags::BuildDatasetIo() const {
  absl::StatusOr<std::shared_ptr<Storage>> storage = Build();
  if (!storage.ok()) return storage.status();
  return DatasetIo{*std::move(storage), std::make_shared<OpenShardPool>(open_shards)};
}

}  // namespace stoker
