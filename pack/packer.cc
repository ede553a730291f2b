#include "pack/packer.h"

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/kernels/jpeg_restart_markers.h"
#include "common/atomic_file.h"
#include "common/bad_sample.h"
#include "common/field_limits.h"
#include "common/logging.h"
#include "common/process_limits.h"
#include "common/status_macros.h"
#include "data/manifest.h"
#include "data/record_fields.h"
#include "data/s3_config.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"
#include "pack/pack_fields.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

// One shard's outcome.
struct ShardResult {
  uint64_t records = 0;
  std::vector<SkippedInput> skipped;
  uint64_t bytes = 0;
  bool reused = false;
};

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

// The input's bytes (a local file or an s3:// object); a skip reason when they are unusable.
absl::Status ReadInput(const Storage& storage, const std::string& location,
                       std::vector<uint8_t>* out, SkippedInput* skip) {
  absl::StatusOr<std::string> bytes = storage.ReadAll(location);
  if (absl::IsNotFound(bytes.status()) || absl::IsPermissionDenied(bytes.status()) ||
      absl::IsOutOfRange(bytes.status())) {
    *skip = SkippedInput{location, "read_error", std::string(bytes.status().message())};
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(bytes.status());  // UNAVAILABLE: the run stops, a rerun resumes.
  out->assign(bytes->begin(), bytes->end());
  if (out->empty()) *skip = SkippedInput{location, "empty", "the file is empty"};
  return absl::OkStatus();
}

// The metadata holding `fields`; a skip reason when a value is over a field's bound.
absl::Status EncodeFields(const std::string& location, const RecordFields& fields,
                          std::string* metadata, SkippedInput* skip) {
  for (const auto& [name, value] : fields) {
    if (value.size() > MaxStoredFieldValueBytes(name)) {
      *skip = SkippedInput{location, "too_large",
                           absl::StrCat("a \"", name, "\" field of ", value.size(),
                                        " bytes, at most ", MaxStoredFieldValueBytes(name))};
      return absl::OkStatus();
    }
  }
  ASSIGN_OR_RETURN(*metadata, EncodeRecordFields(fields));
  return absl::OkStatus();
}

// Rewrites a JPEG with restart markers (--restart-markers). One libjpeg cannot rewrite (it ends
// early, or is over the decode limits) is skipped when verifying, since a worker would reject it
// too, and stored as it is otherwise (--keep-unverified packs every input as is).
void AddRestartMarkers(const PackOptions& options, const std::string& location,
                       std::vector<uint8_t>* bytes, SkippedInput* skip) {
  const absl::StatusOr<EncodedFormat> format = SniffFormat(*bytes);
  if (!format.ok() || *format != EncodedFormat::kJpeg) return;
  absl::StatusOr<std::vector<uint8_t>> rewritten = AddJpegRestartMarkers(
      *bytes, DecodeLimits{options.max_pixels, static_cast<int>(options.max_scans)});
  if (rewritten.ok()) {
    *bytes = *std::move(rewritten);
  } else if (options.verify) {
    *skip = SkippedInput{location, "decode_error", std::string(rewritten.status().message())};
  } else {
    STOKER_LOG(WARNING) << "storing " << location
                        << " without restart markers: " << rewritten.status().message();
  }
}

// Checks (unless told not to), re-encodes and adds restart markers (when asked) one input; a
// skip reason when a worker would reject it.
void Prepare(const PackOptions& options, InputChecker* checker, const std::string& location,
             std::vector<uint8_t>* bytes, SkippedInput* skip) {
  if (options.verify) {
    const absl::Status status = checker->Check(*bytes);
    if (!status.ok()) {
      const auto reason = BadSampleReasonOf(status);
      *skip = SkippedInput{location,
                           reason ? std::string(BadSampleReasonName(*reason)) : "decode_error",
                           std::string(status.message())};
      return;
    }
  }
  if (options.resize_shorter > 0 && !Reencode(options, bytes)) {
    *skip = SkippedInput{location, "decode_error", "OpenCV cannot decode it to resize"};
    return;
  }
  if (options.restart_markers) AddRestartMarkers(options, location, bytes, skip);
}

// A shard complete from an earlier run (reused = true), or an empty result.
ShardResult ExistingShard(const Storage& storage, const std::string& path) {
  ShardResult result;
  auto file = storage.Open(path);
  if (!file.ok()) return result;
  auto index = LoadStokerShardIndex(**file);
  if (!index.ok() || !index->damage.empty()) return result;
  result.records = index->samples.size();
  result.bytes = (*file)->size();
  result.reused = true;
  return result;
}

// Where a shard is written before it is renamed (local) or uploaded (s3://).
std::string StagingPath(const PackOptions& options, const std::string& path) {
  if (!IsS3Url(path)) return path + ".tmp";
  return (fs::temp_directory_path() /
          absl::StrCat("stoker-pack-", ::getpid(), "-", fs::path(path).filename().string()))
      .string();
}

// The bytes of the local staging file `temp`: stoker-pack's own file, not a dataset, so it is
// read without the data-root check (only inputs must lie under a --data-root).
absl::StatusOr<std::string> ReadStagingFile(const std::string& temp) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, OpenLocalFile(temp));
  std::string bytes(file->size(), '\0');
  RETURN_IF_ERROR(file->ReadAt(0, bytes.size(), reinterpret_cast<uint8_t*>(bytes.data())));
  return bytes;
}

// Renames (local) or uploads (s3://, multipart when large) a finished staging file.
absl::Status Publish(const Storage& storage, const std::string& temp, const std::string& path) {
  // Synced: a packed shard is whole or absent after a crash, and a re-run packs what is absent.
  if (!IsS3Url(path)) return CommitReplacement(temp, path, Durability::kSynced);
  std::error_code error;
  absl::StatusOr<std::string> bytes = ReadStagingFile(temp);
  fs::remove(temp, error);
  RETURN_IF_ERROR(bytes.status());
  return storage.Write(path, absl::Span<const uint8_t>(
                                 reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
}

// Reads, checks and prepares plan input `index` into `bytes` and its fields into `metadata`; a
// skip reason when it is not to be packed.
absl::Status PrepareInput(const Storage& storage, const PackOptions& options, const PackPlan& plan,
                          size_t index, InputChecker* checker, std::vector<uint8_t>* bytes,
                          std::string* metadata, SkippedInput* skip) {
  const PackInput& input = plan.inputs[index];
  metadata->clear();
  RecordFields fields;
  if (plan.fields != nullptr) {
    RETURN_IF_ERROR(plan.fields->Read(storage, index, input, &fields, skip));
    if (skip->reason.empty()) RETURN_IF_ERROR(EncodeFields(input.path, fields, metadata, skip));
  }
  if (skip->reason.empty()) RETURN_IF_ERROR(ReadInput(storage, input.path, bytes, skip));
  if (skip->reason.empty()) Prepare(options, checker, input.path, bytes, skip);
  if (skip->reason.empty() && plan.fields != nullptr) {
    RETURN_IF_ERROR(plan.fields->CheckStoredImage(index, input, *bytes, checker, skip));
  }
  return absl::OkStatus();
}

absl::StatusOr<ShardResult> WriteShard(const Storage& storage, const PackOptions& options,
                                       const PackPlan& plan, size_t shard, PackCounters* counters) {
  const std::string path = absl::StrCat(options.output_dir, "/", ShardFileName(shard));
  const auto [begin, end] = plan.shards[shard];
  ShardResult result = ExistingShard(storage, path);
  if (result.reused) {
    counters->images_done += end - begin;
    return result;
  }
  const std::string temp = StagingPath(options, path);
  ASSIGN_OR_RETURN(std::unique_ptr<ShardWriter> writer, ShardWriter::Create(temp));
  InputChecker checker(DecodeLimits{options.max_pixels, static_cast<int>(options.max_scans)});
  std::vector<uint8_t> bytes;
  std::string metadata;
  for (size_t i = begin; i < end; ++i, ++counters->images_done) {
    const PackInput& input = plan.inputs[i];
    SkippedInput skip;
    RETURN_IF_ERROR(PrepareInput(storage, options, plan, i, &checker, &bytes, &metadata, &skip));
    if (!skip.reason.empty()) {
      STOKER_LOG(WARNING) << "skipping " << input.path << ": " << skip.reason << " ("
                          << skip.message << ")";
      result.skipped.push_back(std::move(skip));
      continue;
    }
    RETURN_IF_ERROR(writer->Add(input.key, input.label, bytes, metadata));
  }
  RETURN_IF_ERROR(writer->Finish());
  RETURN_IF_ERROR(Publish(storage, temp, path));
  result.records = writer->records();
  result.bytes = writer->bytes_written();
  return result;
}

}  // namespace

absl::StatusOr<PackSummary> Pack(const Storage& storage, const PackOptions& options,
                                 const PackPlan& plan, PackCounters* counters, Clock* clock) {
  RETURN_IF_ERROR(options.Validate());
  const absl::Time start = clock->Now();
  std::error_code error;
  if (!IsS3Url(options.output_dir)) fs::create_directories(options.output_dir, error);
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
      absl::StatusOr<ShardResult> result = WriteShard(storage, options, plan, s, counters);
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
  const uint32_t threads = options.threads > 0 ? options.threads : OwnProcessLimits().cpus;
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
    summary.skipped += results[s].skipped.size();
    for (SkippedInput& skip : results[s].skipped) summary.skipped_inputs.push_back(std::move(skip));
    summary.output_bytes += results[s].bytes;
    summary.shards_reused += results[s].reused ? 1 : 0;
  }
  for (const std::string& name : plan.class_names) manifest.add_class_names(name);
  if (plan.fields != nullptr) {
    for (const std::string& name : plan.fields->names()) manifest.add_fields(name);
  }
  for (const PackInput& input : plan.inputs) summary.input_bytes += input.bytes;
  summary.shards = results.size();
  if (!options.report.empty()) {
    RETURN_IF_ERROR(WriteSkipReport(storage, summary.skipped_inputs, options.report));
  }
  RETURN_IF_ERROR(
      WriteManifest(storage, manifest, absl::StrCat(options.output_dir, "/manifest.json")));
  summary.seconds = absl::ToDoubleSeconds(clock->Now() - start);
  return summary;
}

}  // namespace stoker
