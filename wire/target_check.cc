#include "wire/target_check.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/target_fields.h"

namespace stoker {
namespace {

absl::Status Ragged(int column, absl::string_view name, uint64_t sample, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("header.fields[", column, "] (\"", name, "\") value ", sample, ": ", what));
}

// Pixels of one image of the batch: H × W of [N, H, W, C] or [N, C, H, W].
uint64_t ImagePixels(const v1::BatchHeader& header) {
  const bool chw = header.layout() == v1::LAYOUT_CHW;
  return static_cast<uint64_t>(header.shape(chw ? 2 : 1)) *
         static_cast<uint64_t>(header.shape(chw ? 3 : 2));
}

// The instance count of one value of typed column `name`, or why the value is ragged.
absl::Status CountInstances(absl::string_view name, uint64_t size, uint64_t pixels,
                            const uint8_t* value, uint64_t* count) {
  uint64_t unit = 0;
  if (name == kBoxesField) unit = kWireBoxBytes;
  if (name == kBoxLabelsField) unit = kWireBoxLabelBytes;
  if (name == kMasksField) unit = pixels;
  if (name == kSemanticMaskField && size != pixels) {
    return absl::DataLossError(
        absl::StrCat(size, " bytes are not one mask of the image's ", pixels, " pixels"));
  }
  if (name == kSemanticMaskField) unit = pixels;
  if (name == kKeypointsField) {
    if (size == 0) {
      *count = 0;
      return absl::OkStatus();
    }
    uint32_t per_instance = 0;
    if (size >= kWireKeypointsPrefixBytes) std::memcpy(&per_instance, value, sizeof(per_instance));
    if (per_instance == 0 || per_instance > kMaxKeypointsPerInstance) {
      return absl::DataLossError(absl::StrCat("keypoints per instance must be 1..",
                                              kMaxKeypointsPerInstance, ", got ", per_instance));
    }
    unit = kWireKeypointBytes * per_instance;
    size -= kWireKeypointsPrefixBytes;
  }
  if (unit == 0 ? size != 0 : size % unit != 0) {
    return absl::DataLossError(
        absl::StrCat(size, " bytes are not whole instances of ", unit, " bytes"));
  }
  *count = unit == 0 ? 0 : size / unit;
  if (*count > kMaxTargetInstances) {
    return absl::DataLossError(absl::StrCat(*count, " instances, more than ", kMaxTargetInstances));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTargetColumns(const v1::BatchHeader& header, const BatchPayload& payload) {
  const uint64_t samples = static_cast<uint64_t>(header.shape(0));
  const uint64_t pixels = ImagePixels(header);
  int boxes_column = -1;
  for (int c = 0; c < header.fields_size(); ++c) {
    if (header.fields(c).name() == kBoxesField) boxes_column = c;
  }
  const uint8_t* bytes = nullptr;  // Gathered on the first keypoints column.
  for (int c = 0; c < header.fields_size(); ++c) {
    const v1::FieldColumn& column = header.fields(c);
    if (!IsTargetField(column.name())) continue;
    if (column.name() == kKeypointsField && bytes == nullptr) bytes = payload.contiguous().data();
    for (uint64_t i = 0; i < samples; ++i) {
      const uint64_t begin = column.offsets(static_cast<int>(i));
      const uint64_t size = column.offsets(static_cast<int>(i + 1)) - begin;
      uint64_t count = 0;
      absl::Status status = CountInstances(column.name(), size, pixels,
                                           bytes == nullptr ? nullptr : bytes + begin, &count);
      if (!status.ok()) return Ragged(c, column.name(), i, status.message());
      if (boxes_column < 0 || c == boxes_column || column.name() == kSemanticMaskField) continue;
      const v1::FieldColumn& boxes = header.fields(boxes_column);
      const uint64_t box_count =
          (boxes.offsets(static_cast<int>(i + 1)) - boxes.offsets(static_cast<int>(i))) /
          kWireBoxBytes;
      if (count != box_count) {
        return Ragged(c, column.name(), i,
                      absl::StrCat(count, " instances for ", box_count, " boxes"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace stoker
