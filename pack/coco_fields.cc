#include "pack/coco_fields.h"

#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "augment/targets/target_codec.h"
#include "common/status_macros.h"
#include "data/s3_config.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "pack/coco_masks.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

std::string ImageName(const CocoImage& image) {
  return absl::StrCat("images[", image.index, "] (id ", image.id, ")");
}

// The instance masks of `image`'s annotations, rasterized at its size.
absl::StatusOr<TargetMasks> RasterizeMasks(const CocoImage& image) {
  TargetMasks masks;
  masks.count = static_cast<uint32_t>(image.annotations.size());
  masks.height = image.height;
  masks.width = image.width;
  const size_t area = size_t{image.height} * image.width;
  masks.pixels.assign(masks.count * area, 0);
  for (size_t i = 0; i < image.annotations.size(); ++i) {
    const CocoSegmentation& segmentation = *image.annotations[i].segmentation;
    const absl::Span<uint8_t> mask = absl::MakeSpan(masks.pixels).subspan(i * area, area);
    for (const std::vector<double>& polygon : segmentation.polygons) {
      FillPolygon(polygon, image.height, image.width, mask);
    }
    if (segmentation.polygons.empty()) {
      RETURN_IF_ERROR(CocoRleToMask(segmentation.rle_counts, image.height, image.width, mask));
    }
  }
  return masks;
}

TargetKeypoints GatherKeypoints(const CocoImage& image, uint32_t per_instance) {
  TargetKeypoints keypoints;
  keypoints.count = static_cast<uint32_t>(image.annotations.size());
  keypoints.per_instance = per_instance;
  for (const CocoAnnotation& annotation : image.annotations) {
    for (size_t k = 0; k < annotation.keypoints.size(); k += 3) {
      keypoints.xy.push_back(annotation.keypoints[k]);
      keypoints.xy.push_back(annotation.keypoints[k + 1]);
      keypoints.visibility.push_back(static_cast<uint8_t>(annotation.keypoints[k + 2]));
    }
  }
  return keypoints;
}

// The bytes of each image file, from a listing for s3:// inputs and stat otherwise; NOT_FOUND
// naming an image without a file.
absl::Status AddInputs(const Storage& storage, const PackOptions& options,
                       const CocoDataset& dataset, PackPlan* plan) {
  const std::string folder =
      absl::EndsWith(options.input, "/") ? options.input : options.input + "/";
  std::map<std::string, uint64_t> listed;
  if (IsS3Url(folder)) {
    ASSIGN_OR_RETURN(std::vector<StorageEntry> entries, storage.List(folder));
    for (const StorageEntry& entry : entries) listed[entry.location] = entry.size;
  }
  for (const CocoImage& image : dataset.images) {
    const std::string path = folder + image.file_name;
    std::error_code error;
    const auto found = listed.find(path);
    const uint64_t bytes =
        IsS3Url(folder) ? (found != listed.end() ? found->second : 0) : fs::file_size(path, error);
    if (error || (IsS3Url(folder) && found == listed.end())) {
      return absl::NotFoundError(absl::StrCat(options.coco, ": ", ImageName(image),
                                              ": its file is not in ", options.input));
    }
    const std::string key = fs::path(image.file_name).replace_extension().string();
    plan->inputs.push_back(PackInput{path, key, /*label=*/-1, bytes});
  }
  return absl::OkStatus();
}

}  // namespace

CocoFields::CocoFields(std::string file, CocoDataset dataset)
    : file_(std::move(file)), dataset_(std::move(dataset)) {}

std::vector<std::string> CocoFields::names() const {
  std::vector<std::string> names = {std::string(kBoxesField), std::string(kBoxLabelsField)};
  if (dataset_.has_masks) names.emplace_back(kMasksField);
  if (dataset_.keypoints_per_instance > 0) names.emplace_back(kKeypointsField);
  return names;
}

absl::Status CocoFields::Read(const Storage& /*storage*/, size_t index, const PackInput& /*input*/,
                              RecordFields* fields, SkippedInput* /*skip*/) const {
  const CocoImage& image = dataset_.images[index];
  absl::StatusOr<SampleTargets> targets = CocoImageTargets(image, dataset_);
  absl::StatusOr<RecordFields> encoded =
      targets.ok() ? EncodeStoredTargets(*targets) : targets.status();
  if (!encoded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": ", ImageName(image), ": ", encoded.status().message()));
  }
  *fields = *std::move(encoded);
  return absl::OkStatus();
}

absl::Status CocoFields::CheckStoredImage(size_t index, const PackInput& input,
                                          absl::Span<const uint8_t> bytes, InputChecker* checker,
                                          SkippedInput* skip) const {
  const CocoImage& image = dataset_.images[index];
  absl::StatusOr<EncodedHeader> header = checker->ReadHeader(bytes);
  if (!header.ok()) {
    *skip = SkippedInput{input.path, "decode_error", std::string(header.status().message())};
    return absl::OkStatus();
  }
  if (header->width != image.width || header->height != image.height) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_, ": ", ImageName(image), ": its image decodes to ", header->width, "x",
        header->height, ", not the ", image.width, "x", image.height, " the file says"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SampleTargets> CocoImageTargets(const CocoImage& image, const CocoDataset& dataset) {
  SampleTargets targets;
  targets.canvas_height = image.height;
  targets.canvas_width = image.width;
  targets.boxes.emplace();
  targets.box_labels.emplace();
  for (const CocoAnnotation& annotation : image.annotations) {
    targets.boxes->insert(targets.boxes->end(), annotation.box.begin(), annotation.box.end());
    targets.box_labels->push_back(annotation.category_id);
  }
  if (dataset.has_masks) {
    ASSIGN_OR_RETURN(targets.masks, RasterizeMasks(image));
  }
  if (dataset.keypoints_per_instance > 0) {
    targets.keypoints = GatherKeypoints(image, dataset.keypoints_per_instance);
  }
  return targets;
}

absl::StatusOr<PackPlan> PlanCocoPack(const Storage& storage, const PackOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, storage.Open(options.coco));
  if (file->size() > kMaxCocoFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.coco, ": ", file->size(), " bytes, over the bound of ", kMaxCocoFileBytes));
  }
  std::string text(file->size(), '\0');
  RETURN_IF_ERROR(file->ReadAt(0, text.size(), reinterpret_cast<uint8_t*>(text.data())));
  CocoLimits limits;
  limits.max_pixels = options.max_pixels;
  limits.max_instances = kMaxTargetInstances;
  limits.max_keypoints = kMaxKeypointsPerInstance;
  limits.max_mask_bytes = kMaxSampleMaskBytes;
  ASSIGN_OR_RETURN(CocoDataset dataset, ParseCocoInstances(text, options.coco, limits));
  text = std::string();
  if (dataset.images.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(options.coco, ": lists no image"));
  }
  PackPlan plan;
  const int64_t last_category = dataset.categories.empty() ? -1 : dataset.categories.back().first;
  plan.class_names.resize(last_category + 1);
  for (const auto& [id, name] : dataset.categories) plan.class_names[id] = name;
  RETURN_IF_ERROR(AddInputs(storage, options, dataset, &plan));
  CutShards(options.shard_bytes, &plan);
  plan.fields = std::make_shared<CocoFields>(options.coco, std::move(dataset));
  return plan;
}

}  // namespace stoker
