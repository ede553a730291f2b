#include "pack/pack_plan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "data/s3_config.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "pack/caption_fields.h"
#include "pack/coco_fields.h"
#include "pack/seg_mask_fields.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

bool IsImageFile(const fs::path& path) {
  const std::string ext = absl::AsciiStrToLower(path.extension().string());
  if (absl::EndsWith(absl::AsciiStrToLower(path.filename().string()), ".seg.png")) return false;
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".webp";
}

// (path, class name) pairs from a folder of class folders.
absl::Status ListFolder(const std::string& dir,
                        std::vector<std::pair<std::string, std::string>>* files) {
  std::error_code error;
  for (const fs::directory_entry& cls : fs::directory_iterator(dir, error)) {
    if (!cls.is_directory()) continue;
    for (const fs::directory_entry& file : fs::directory_iterator(cls.path(), error)) {
      if (file.is_regular_file() && IsImageFile(file.path())) {
        files->emplace_back(file.path().string(), cls.path().filename().string());
      }
    }
  }
  if (error)
    return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", error.message()));
  return absl::OkStatus();
}

// (s3:// URL, class name) pairs from s3://bucket/prefix/<class>/<file>.
absl::Status ListBucketPrefix(const Storage& storage, const std::string& input,
                              std::vector<std::pair<std::string, std::string>>* files,
                              std::map<std::string, uint64_t>* sizes) {
  const std::string prefix = absl::EndsWith(input, "/") ? input : input + "/";
  ASSIGN_OR_RETURN(std::vector<StorageEntry> entries, storage.List(prefix));
  for (const StorageEntry& entry : entries) {
    const std::string rest = entry.location.substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || !IsImageFile(fs::path(rest))) continue;
    files->emplace_back(entry.location, rest.substr(0, slash));
    (*sizes)[entry.location] = entry.size;
  }
  return absl::OkStatus();
}

absl::Status ListFileList(const std::string& list,
                          std::vector<std::pair<std::string, std::string>>* files) {
  std::ifstream in(list);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", list));
  const fs::path base = fs::path(list).parent_path();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> fields =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(list, ":", number, ": expected \"path class_name\", got \"", text, "\""));
    }
    const fs::path path(fields[0]);
    files->emplace_back(path.is_absolute() ? path.string() : (base / path).string(), fields[1]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PackOptions::Validate() const {
  if (input.empty()) return absl::InvalidArgumentError("input: must not be empty");
  if (output_dir.empty()) return absl::InvalidArgumentError("output_dir: must not be empty");
  for (const auto& [field, location] : {std::pair<const char*, const std::string*>{"input", &input},
                                        {"output_dir", &output_dir},
                                        {"report", &report},
                                        {"captions_file", &captions_file},
                                        {"coco", &coco}}) {
    absl::StatusOr<StorageScheme> scheme = SchemeOf(*location);
    if (!scheme.ok())
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", scheme.status().message()));
    if (*scheme == StorageScheme::kHttp) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": must be a local path or an s3:// URL, got ", *location));
    }
  }
  if (captions && !captions_file.empty()) {
    return absl::InvalidArgumentError(
        "captions_file: give it or captions (sidecar .txt files), not both");
  }
  if (!captions_format.empty() && captions_file.empty()) {
    return absl::InvalidArgumentError("captions_format: needs captions_file");
  }
  if (!coco.empty() && has_captions()) {
    return absl::InvalidArgumentError("coco: give it or captions, not both");
  }
  if (!coco.empty() && resize_shorter > 0) {
    return absl::InvalidArgumentError(
        "coco: cannot be combined with resize_shorter (the targets are in the original pixels)");
  }
  if (seg_masks && (has_captions() || !coco.empty())) {
    return absl::InvalidArgumentError("seg_masks: give it or captions or coco, not both");
  }
  if (seg_masks && resize_shorter > 0) {
    return absl::InvalidArgumentError(
        "seg_masks: cannot be combined with resize_shorter (the label maps are in the original "
        "pixels)");
  }
  if (max_pixels == 0) return absl::InvalidArgumentError("max_pixels: must be > 0");
  if (max_scans == 0) return absl::InvalidArgumentError("max_scans: must be > 0");
  if (shard_bytes == 0) return absl::InvalidArgumentError("shard_bytes: must be > 0");
  if (quality < 1 || quality > 100) {
    return absl::InvalidArgumentError(absl::StrCat("quality: must be in 1..100, got ", quality));
  }
  return absl::OkStatus();
}

std::string ShardFileName(size_t shard) { return absl::StrFormat("shard-%05d.stoker", shard); }

void CutShards(uint64_t shard_bytes, PackPlan* plan) {
  uint64_t bytes = 0;
  size_t begin = 0;
  for (size_t i = 0; i < plan->inputs.size(); ++i) {
    bytes += plan->inputs[i].bytes;
    if (bytes >= shard_bytes) {
      plan->shards.emplace_back(begin, i + 1);
      begin = i + 1;
      bytes = 0;
    }
  }
  if (begin < plan->inputs.size()) plan->shards.emplace_back(begin, plan->inputs.size());
}

absl::StatusOr<PackPlan> PlanPack(const Storage& storage, const PackOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  if (!options.coco.empty()) return PlanCocoPack(storage, options);
  std::error_code error;
  std::vector<std::pair<std::string, std::string>> files;
  std::map<std::string, uint64_t> sizes;  // Known from a listing.
  if (IsS3Url(options.input)) {
    RETURN_IF_ERROR(ListBucketPrefix(storage, options.input, &files, &sizes));
  } else if (!fs::exists(options.input, error)) {
    return absl::NotFoundError(absl::StrCat("input ", options.input, " does not exist"));
  } else if (fs::is_directory(options.input, error)) {
    RETURN_IF_ERROR(ListFolder(options.input, &files));
  } else {
    RETURN_IF_ERROR(ListFileList(options.input, &files));
  }
  if (files.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("input ", options.input, " holds no image"));
  }
  std::map<std::string, uint32_t> labels;
  for (const auto& [path, cls] : files) labels.emplace(cls, 0);
  PackPlan plan;
  for (auto& [name, label] : labels) {
    label = static_cast<uint32_t>(plan.class_names.size());
    plan.class_names.push_back(name);
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second, a.first) < std::tie(b.second, b.first);
  });
  for (const auto& [path, cls] : files) {
    const auto listed = sizes.find(path);
    const uint64_t bytes = listed != sizes.end() ? listed->second : fs::file_size(path, error);
    if (error)
      return absl::NotFoundError(absl::StrCat("cannot stat ", path, ": ", error.message()));
    plan.inputs.push_back(PackInput{path, absl::StrCat(cls, "/", fs::path(path).stem().string()),
                                    labels[cls], bytes});
  }
  CutShards(options.shard_bytes, &plan);
  if (options.has_captions()) {
    ASSIGN_OR_RETURN(plan.fields, MakeCaptionFields(storage, options, plan.inputs));
  }
  if (options.seg_masks) plan.fields = std::make_shared<SegMaskFields>(plan.inputs.size());
  return plan;
}

}  // namespace stoker
