// scripts/bench.sh s3: shard read throughput from the loopback S3 server (s3rver behind the
// SigV4-verifying proxy, tests/s3/) through Stoker's S3 client, against `curl` fetching the same
// objects (one curl process, keep-alive, same signing, bodies to /dev/null) and against reading
// the same bytes from local files; then the shard cache's hit path against the same local files.
// Alternating rounds, one thread each, 8 MiB reads; the best round of each side counts.
//
//   s3_bench [--objects=8] [--mib=16] [--rounds=5]

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/flags.h"
#include "data/storage_backend.h"
#include "data/testing/s3_test_server.h"

namespace stoker {
namespace {

constexpr size_t kChunk = size_t{8} << 20;

// Reads every file fully in kChunk reads; returns MB/s (10^6 bytes).
double ReadAll(const std::vector<std::unique_ptr<RandomAccessFile>>& files) {
  std::vector<uint8_t> buffer(kChunk);
  uint64_t bytes = 0;
  const absl::Time start = Clock::Real()->Now();
  for (const auto& file : files) {
    for (uint64_t at = 0; at < file->size(); at += kChunk) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, file->size() - at));
      const absl::Status status = file->ReadAt(at, n, buffer.data());
      if (!status.ok()) {
        std::fprintf(stderr, "s3_bench: %s\n", status.ToString().c_str());
        std::exit(1);
      }
      bytes += n;
    }
  }
  return bytes / 1e6 / absl::ToDoubleSeconds(Clock::Real()->Now() - start);
}

std::vector<std::unique_ptr<RandomAccessFile>> OpenAll(const Storage& storage,
                                                       const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<RandomAccessFile>> files;
  for (const std::string& name : names) {
    auto file = storage.Open(name);
    if (!file.ok()) {
      std::fprintf(stderr, "s3_bench: %s\n", file.status().ToString().c_str());
      std::exit(1);
    }
    files.push_back(*std::move(file));
  }
  return files;
}

int Run(int argc, char** argv) {
  uint32_t objects = 8, mib = 16, rounds = 5;
  FlagSet flags("s3_bench", "S3 shard reads vs curl vs local files; cache hits vs local files.");
  flags.Add("objects", &objects, "objects (shards) to read");
  flags.Add("mib", &mib, "MiB per object");
  flags.Add("rounds", &rounds, "alternating rounds");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  auto server = testing::S3TestServer::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "s3_bench: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const testing::S3TestServerOptions& keys = (*server)->options();
  setenv("AWS_ACCESS_KEY_ID", keys.access_key_id.c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", keys.secret_access_key.c_str(), 1);
  testing::TempDir dir;
  StorageOptions options;
  options.s3.endpoint = (*server)->endpoint();
  auto remote = Storage::Create(options, AwsEnvironment::Real());
  options.cache = ShardCacheOptions{dir.File("cache"), uint64_t{objects + 1} * (mib + 1) << 20};
  auto cached = Storage::Create(options, AwsEnvironment::Real());
  if (!remote.ok() || !cached.ok()) return 1;
  std::vector<std::string> urls, paths, curl_urls;
  std::string data(size_t{mib} << 20, '\0');
  for (uint32_t i = 0; i < objects; ++i) {
    for (size_t j = 0; j < data.size(); j += 8) data[j] = static_cast<char>(i * 131 + j / 8191);
    urls.push_back(absl::StrCat("s3://data/bench/shard-", i, ".stoker"));
    paths.push_back(dir.File(absl::StrCat("shard-", i, ".stoker")));
    curl_urls.push_back(absl::StrCat((*server)->endpoint(), "/data/bench/shard-", i, ".stoker"));
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(data.data()),
                                          data.size());
    if (!(*remote)->Write(urls.back(), bytes).ok() || !WriteLocalFile(paths.back(), bytes).ok()) {
      return 1;
    }
  }
  OpenAll(**cached, urls);  // Fills the cache: the cache rounds measure hits.
  const std::string curl =
      absl::StrCat("curl -sf --aws-sigv4 aws:amz:us-east-1:s3 -u ", keys.access_key_id, ":",
                   keys.secret_access_key,
                   " -H 'x-amz-content-sha256: "
                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' ",
                   absl::StrJoin(curl_urls, " ", [](std::string* out, const std::string& url) {
                     absl::StrAppend(out, "-o /dev/null ", url);
                   }));
  const double total_mb = objects * (static_cast<double>(mib) * 1048576) / 1e6;
  double s3 = 0, via_curl = 0, local = 0, cache = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    const double s3_round = ReadAll(OpenAll(**remote, urls));
    const absl::Time start = Clock::Real()->Now();
    if (std::system(curl.c_str()) != 0) {
      std::fprintf(stderr, "s3_bench: curl failed: %s\n", curl.c_str());
      return 1;
    }
    const double curl_round = total_mb / absl::ToDoubleSeconds(Clock::Real()->Now() - start);
    const double local_round = ReadAll(OpenAll(**remote, paths));
    const double cache_round = ReadAll(OpenAll(**cached, urls));
    std::printf("round %u: s3 %.0f MB/s, curl %.0f MB/s, local %.0f MB/s, cache hit %.0f MB/s\n",
                round + 1, s3_round, curl_round, local_round, cache_round);
    s3 = std::max(s3, s3_round);
    via_curl = std::max(via_curl, curl_round);
    local = std::max(local, local_round);
    cache = std::max(cache, cache_round);
  }
  std::printf(
      "RESULT name=s3 objects=%u mib=%u s3_mb_s=%.1f curl_mb_s=%.1f local_mb_s=%.1f "
      "cache_mb_s=%.1f vs_curl=%.3f s3_vs_local=%.3f cache_vs_local=%.3f\n",
      objects, mib, s3, via_curl, local, cache, s3 / via_curl, s3 / local, cache / local);
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
