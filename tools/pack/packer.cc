#include "tools/pack/packer.h"

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "data/manifest.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;

// One shard's outcome.
struct ShardResult {
  uint64_t records = 0;
  uint64_t skipped = 0;
  uint64_t bytes = 0;
  bool reused = false;
};

bool ReadBytes(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  out->resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(out->data()), out->size()));
}

// Decodes, scales the shorter side down to `shorter` and re-encodes; false when it does not decode.
bool Reencode(const PackOptions& options, std::vector<uint8_t>* bytes) {
  cv::Mat image = cv::imdecode(*bytes, cv::IMREAD_COLOR);
  if (image.empty()) return false;
  const int side = std::min(image.rows, image.cols);
  if (side > static_cast<int>(options.resize_shorter)) {
    const double scale = static_cast<double>(options.resize_shorter) / side;
    cv::resize(image, image, cv::Size(), scale, scale, cv::INTER_AREA);
  }
  return cv::imencode(".jpg", image, *bytes,
                      {cv::IMWRITE_JPEG_QUALITY, static_cast<int>(options.quality)});
}

// A shard complete from an earlier run (reused = true), or an empty result.
ShardResult ExistingShard(const std::string& path) {
  ShardResult result;
  auto file = OpenLocalFile(path);
  if (!file.ok()) return result;
  auto index = LoadStokerShardIndex(**file);
  if (!index.ok() || !index->damage.empty()) return result;
  result.records = index->samples.size();
  result.bytes = (*file)->size();
  result.reused = true;
  return result;
}

absl::StatusOr<ShardResult> WriteShard(const PackOptions& options, const PackPlan& plan,
                                       size_t shard, PackCounters* counters) {
  const std::string path = (fs::path(options.output_dir) / ShardFileName(shard)).string();
  const auto [begin, end] = plan.shards[shard];
  ShardResult result = ExistingShard(path);
  if (result.reused) {
    counters->images_done += end - begin;
    return result;
  }
  const std::string temp = path + ".tmp";
  ASSIGN_OR_RETURN(std::unique_ptr<ShardWriter> writer, ShardWriter::Create(temp));
  std::vector<uint8_t> bytes;
  for (size_t i = begin; i < end; ++i, ++counters->images_done) {
    const PackInput& input = plan.inputs[i];
    if (!ReadBytes(input.path, &bytes) ||
        (options.resize_shorter > 0 && !Reencode(options, &bytes))) {
      STOKER_LOG(WARNING) << "skipping " << input.path << ": cannot read or decode it";
      ++result.skipped;
      continue;
    }
    RETURN_IF_ERROR(writer->Add(input.key, input.label, bytes));
  }
  RETURN_IF_ERROR(writer->Finish());
  std::error_code error;
  fs::rename(temp, path, error);
  if (error)
    return absl::UnavailableError(absl::StrCat("cannot rename ", temp, ": ", error.message()));
  result.records = writer->records();
  result.bytes = writer->bytes_written();
  return result;
}

}  // namespace

absl::StatusOr<PackSummary> Pack(const PackOptions& options, const PackPlan& plan,
                                 PackCounters* counters) {
  RETURN_IF_ERROR(options.Validate());
  const absl::Time start = absl::Now();
  std::error_code error;
  fs::create_directories(options.output_dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", options.output_dir, ": ", error.message()));
  }
  std::vector<ShardResult> results(plan.shards.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status first_error;  // Guarded by mu.
  auto work = [&] {
    for (size_t s = next++; s < plan.shards.size(); s = next++) {
      absl::StatusOr<ShardResult> result = WriteShard(options, plan, s, counters);
      if (!result.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = result.status();
        next = plan.shards.size();
        return;
      }
      results[s] = *result;
      ++counters->shards_done;
    }
  };
  const uint32_t threads =
      options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  RETURN_IF_ERROR(first_error);

  PackSummary summary;
  stoker::v1::ShardManifest manifest;
  manifest.set_version(1);
  for (size_t s = 0; s < results.size(); ++s) {
    stoker::v1::ManifestShard* shard = manifest.add_shards();
    shard->set_path(ShardFileName(s));
    shard->set_records(results[s].records);
    shard->set_bytes(results[s].bytes);
    summary.images += results[s].records;
    summary.skipped += results[s].skipped;
    summary.output_bytes += results[s].bytes;
    summary.shards_reused += results[s].reused ? 1 : 0;
  }
  for (const std::string& name : plan.class_names) manifest.add_class_names(name);
  for (const PackInput& input : plan.inputs) summary.input_bytes += input.bytes;
  summary.shards = results.size();
  RETURN_IF_ERROR(
      WriteManifest(manifest, (fs::path(options.output_dir) / "manifest.json").string()));
  summary.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return summary;
}

}  // namespace stoker
