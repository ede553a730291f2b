#include "augment/targets/target_codec.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode_png_webp.h"
#include "common/bad_sample.h"
#include "common/byte_codec.h"
#include "common/status_macros.h"
#include "image/image.h"

namespace stoker {
namespace {

// Fixed-width little-endian values of a type the byte codec does not cover (float32, int64),
// through their bit patterns. This machine's floats are IEEE 754 (static_assert below).
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "IEEE float32");

void AppendFloat(float value, std::string* out) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  AppendLittleEndian(bits, out);
}

bool ReadFloat(ByteReader* reader, float* value) {
  uint32_t bits;
  if (!reader->Read(&bits)) return false;
  std::memcpy(value, &bits, 4);
  return true;
}

absl::Status BadAnnotation(absl::string_view field, absl::string_view why) {
  return BadSampleError(BadSampleReason::kBadAnnotation, absl::StrCat("\"", field, "\": ", why));
}

absl::Status TooManyInstances(absl::string_view field, uint64_t count) {
  return BadSampleError(BadSampleReason::kTooLarge,
                        absl::StrCat("\"", field, "\": ", count, " instances, over the bound of ",
                                     kMaxTargetInstances));
}

// `bytes` as whole values of `value_bytes` each: their count, or a bad annotation.
absl::StatusOr<uint64_t> WholeValues(absl::string_view field, absl::Span<const uint8_t> bytes,
                                     uint64_t value_bytes) {
  if (bytes.size() % value_bytes != 0) {
    return BadAnnotation(field, absl::StrCat(bytes.size(), " bytes are not whole values of ",
                                             value_bytes, " bytes"));
  }
  const uint64_t count = bytes.size() / value_bytes;
  if (count > kMaxTargetInstances) return TooManyInstances(field, count);
  return count;
}

absl::StatusOr<std::vector<float>> DecodeBoxes(absl::Span<const uint8_t> bytes) {
  ASSIGN_OR_RETURN(const uint64_t count, WholeValues(kBoxesField, bytes, 16));
  std::vector<float> boxes(count * 4);
  ByteReader reader(bytes);
  for (float& value : boxes) ReadFloat(&reader, &value);
  return boxes;
}

absl::StatusOr<std::vector<int64_t>> DecodeLabels(absl::Span<const uint8_t> bytes) {
  ASSIGN_OR_RETURN(const uint64_t count, WholeValues(kBoxLabelsField, bytes, 8));
  std::vector<int64_t> labels(count);
  ByteReader reader(bytes);
  for (int64_t& label : labels) {
    uint64_t bits = 0;
    reader.Read(&bits);
    label = static_cast<int64_t>(bits);
  }
  return labels;
}

// Masks of the canvas's size only, at most kMaxSampleMaskBytes: both are checked before anything
// is allocated.
absl::StatusOr<TargetMasks> DecodeMasks(absl::Span<const uint8_t> bytes, uint32_t canvas_height,
                                        uint32_t canvas_width) {
  ByteReader reader(bytes);
  TargetMasks masks;
  if (!reader.Read(&masks.count) || !reader.Read(&masks.height) || !reader.Read(&masks.width)) {
    return BadAnnotation(kMasksField, "shorter than its count, height and width");
  }
  if (masks.count > kMaxTargetInstances) return TooManyInstances(kMasksField, masks.count);
  if (masks.height != canvas_height || masks.width != canvas_width) {
    return BadAnnotation(
        kMasksField, absl::StrCat("masks are ", masks.height, "x", masks.width, ", the image is ",
                                  canvas_height, "x", canvas_width));
  }
  const uint64_t area = uint64_t{masks.height} * masks.width;
  if (masks.count * area > kMaxSampleMaskBytes) {
    return BadSampleError(
        BadSampleReason::kTooLarge,
        absl::StrCat("\"masks\": ", masks.count, " masks of ", masks.width, "x", masks.height,
                     " are over the bound of ", kMaxSampleMaskBytes, " bytes"));
  }
  // Every mask holds at least one run, 4 bytes: a count the bytes cannot back is refused
  // before anything is allocated for it.
  if (masks.count > reader.remaining() / 4) {
    return BadAnnotation(
        kMasksField, absl::StrCat(masks.count, " masks in ", reader.remaining(), " bytes of runs"));
  }
  masks.pixels.resize(masks.count * area);
  std::vector<uint32_t> runs;
  for (uint32_t m = 0; m < masks.count; ++m) {
    uint32_t run_count = 0;
    if (!reader.Read(&run_count) || run_count > reader.remaining() / 4) {
      return BadAnnotation(kMasksField, absl::StrCat("mask ", m, " runs past the end"));
    }
    runs.resize(run_count);
    for (uint32_t& run : runs) reader.Read(&run);
    absl::Status status = RunsToMask(runs, absl::MakeSpan(masks.pixels).subspan(m * area, area));
    if (!status.ok())
      return BadAnnotation(kMasksField, absl::StrCat("mask ", m, ": ", status.message()));
  }
  if (reader.remaining() != 0) {
    return BadAnnotation(kMasksField, absl::StrCat(reader.remaining(), " bytes after the masks"));
  }
  return masks;
}

absl::StatusOr<TargetKeypoints> DecodeKeypoints(absl::Span<const uint8_t> bytes) {
  ByteReader reader(bytes);
  TargetKeypoints keypoints;
  if (!reader.Read(&keypoints.count) || !reader.Read(&keypoints.per_instance)) {
    return BadAnnotation(kKeypointsField, "shorter than its count and keypoints per instance");
  }
  if (keypoints.count > kMaxTargetInstances) {
    return TooManyInstances(kKeypointsField, keypoints.count);
  }
  if (keypoints.per_instance > kMaxKeypointsPerInstance) {
    return BadSampleError(
        BadSampleReason::kTooLarge,
        absl::StrCat("\"keypoints\": ", keypoints.per_instance, " per instance, over the bound of ",
                     kMaxKeypointsPerInstance));
  }
  const uint64_t points = uint64_t{keypoints.count} * keypoints.per_instance;
  if (reader.remaining() != points * 9) {
    return BadAnnotation(kKeypointsField, absl::StrCat(reader.remaining(), " bytes for ", points,
                                                       " keypoints of 9 bytes (x, y, visibility)"));
  }
  keypoints.xy.resize(points * 2);
  for (float& value : keypoints.xy) ReadFloat(&reader, &value);
  absl::Span<const uint8_t> visibility;
  reader.ReadBytes(points, &visibility);
  keypoints.visibility.assign(visibility.begin(), visibility.end());
  return keypoints;
}

// A label map PNG of the canvas's size: it holds what the image's decode already held, one byte a
// pixel, and DecodePngLabels refuses another size before reading any row.
absl::StatusOr<TargetMasks> DecodeSemanticMask(absl::Span<const uint8_t> png,
                                               uint32_t canvas_height, uint32_t canvas_width) {
  TargetMasks mask{1, canvas_height, canvas_width, {}};
  const ImageShape shape{canvas_height, canvas_width, 1, PixelType::kUint8};
  mask.pixels.resize(shape.bytes());
  if (absl::Status status = DecodePngLabels(png, ImageView{mask.pixels.data(), shape});
      !status.ok()) {
    return BadAnnotation(kSemanticMaskField, status.message());
  }
  return mask;
}

// Boxes must lie on the canvas: [0, width] × [0, height].
absl::Status CheckBoxesOnCanvas(const std::vector<float>& boxes, uint32_t height, uint32_t width) {
  for (size_t i = 0; i < boxes.size(); i += 4) {
    if (boxes[i] < 0 || boxes[i + 1] < 0 || boxes[i + 2] > width || boxes[i + 3] > height) {
      return BadAnnotation(
          kBoxesField,
          absl::StrCat("box ", i / 4, " (", boxes[i], ", ", boxes[i + 1], ", ", boxes[i + 2], ", ",
                       boxes[i + 3], ") lies outside the ", width, "x", height, " image"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> EncodeStoredTargets(
    const SampleTargets& targets) {
  RETURN_IF_ERROR(ValidateTargets(targets));
  const uint64_t instances =
      std::max<uint64_t>({targets.box_count(), targets.masks ? targets.masks->count : 0,
                          targets.keypoints ? targets.keypoints->count : 0});
  if (instances > kMaxTargetInstances) {
    return absl::InvalidArgumentError(absl::StrCat(
        "targets hold ", instances, " instances, over the bound of ", kMaxTargetInstances));
  }
  std::vector<std::pair<std::string, std::string>> fields;
  if (targets.boxes) {
    std::string& value = fields.emplace_back(std::string(kBoxesField), "").second;
    for (float coordinate : *targets.boxes) AppendFloat(coordinate, &value);
  }
  if (targets.box_labels) {
    std::string& value = fields.emplace_back(std::string(kBoxLabelsField), "").second;
    for (int64_t label : *targets.box_labels) {
      AppendLittleEndian(static_cast<uint64_t>(label), &value);
    }
  }
  if (targets.semantic_mask) {
    return absl::InvalidArgumentError(
        "targets.semantic_mask: stored as its PNG file as it is, not encoded from pixels");
  }
  if (targets.masks) {
    const TargetMasks& masks = *targets.masks;
    std::string& value = fields.emplace_back(std::string(kMasksField), "").second;
    AppendLittleEndian(masks.count, &value);
    AppendLittleEndian(masks.height, &value);
    AppendLittleEndian(masks.width, &value);
    const size_t area = size_t{masks.height} * masks.width;
    for (uint32_t m = 0; m < masks.count; ++m) {
      const std::vector<uint32_t> runs =
          MaskToRuns(absl::MakeConstSpan(masks.pixels).subspan(m * area, area));
      AppendLittleEndian(static_cast<uint32_t>(runs.size()), &value);
      for (uint32_t run : runs) AppendLittleEndian(run, &value);
    }
  }
  if (targets.keypoints) {
    const TargetKeypoints& keypoints = *targets.keypoints;
    std::string& value = fields.emplace_back(std::string(kKeypointsField), "").second;
    AppendLittleEndian(keypoints.count, &value);
    AppendLittleEndian(keypoints.per_instance, &value);
    for (float coordinate : keypoints.xy) AppendFloat(coordinate, &value);
    value.append(keypoints.visibility.begin(), keypoints.visibility.end());
  }
  return fields;
}

absl::StatusOr<SampleTargets> DecodeStoredTargets(const StoredTargetValues& values,
                                                  uint32_t canvas_height, uint32_t canvas_width) {
  SampleTargets targets;
  targets.canvas_height = canvas_height;
  targets.canvas_width = canvas_width;
  if (values.boxes) {
    ASSIGN_OR_RETURN(targets.boxes, DecodeBoxes(*values.boxes));
  }
  if (values.box_labels) {
    ASSIGN_OR_RETURN(targets.box_labels, DecodeLabels(*values.box_labels));
  }
  if (values.masks) {
    ASSIGN_OR_RETURN(targets.masks, DecodeMasks(*values.masks, canvas_height, canvas_width));
  }
  if (values.keypoints) {
    ASSIGN_OR_RETURN(targets.keypoints, DecodeKeypoints(*values.keypoints));
  }
  if (values.semantic_mask) {
    ASSIGN_OR_RETURN(targets.semantic_mask,
                     DecodeSemanticMask(*values.semantic_mask, canvas_height, canvas_width));
  }
  if (absl::Status status = ValidateTargets(targets); !status.ok()) {
    return BadSampleError(BadSampleReason::kBadAnnotation, std::string(status.message()));
  }
  if (targets.boxes) {
    RETURN_IF_ERROR(CheckBoxesOnCanvas(*targets.boxes, canvas_height, canvas_width));
  }
  return targets;
}

void AppendWireTarget(absl::string_view field, const SampleTargets& targets, std::string* out) {
  if (field == kBoxesField && targets.boxes) {
    for (float coordinate : *targets.boxes) AppendFloat(coordinate, out);
  } else if (field == kBoxLabelsField && targets.box_labels) {
    for (int64_t label : *targets.box_labels) {
      AppendLittleEndian(static_cast<uint64_t>(label), out);
    }
  } else if (field == kMasksField && targets.masks) {
    out->append(targets.masks->pixels.begin(), targets.masks->pixels.end());
  } else if (field == kSemanticMaskField && targets.semantic_mask) {
    out->append(targets.semantic_mask->pixels.begin(), targets.semantic_mask->pixels.end());
  } else if (field == kKeypointsField && targets.keypoints) {
    const TargetKeypoints& keypoints = *targets.keypoints;
    AppendLittleEndian(keypoints.per_instance, out);
    const size_t points = size_t{keypoints.count} * keypoints.per_instance;
    for (size_t p = 0; p < points; ++p) {
      AppendFloat(keypoints.xy[2 * p], out);
      AppendFloat(keypoints.xy[2 * p + 1], out);
      AppendFloat(static_cast<float>(keypoints.visibility[p]), out);
    }
  }
}

std::vector<uint32_t> MaskToRuns(absl::Span<const uint8_t> mask) {
  std::vector<uint32_t> runs;
  bool value = false;
  uint32_t run = 0;
  for (uint8_t pixel : mask) {
    if ((pixel != 0) != value) {
      runs.push_back(run);
      value = !value;
      run = 0;
    }
    ++run;
  }
  runs.push_back(run);
  return runs;
}

absl::Status RunsToMask(absl::Span<const uint32_t> runs, absl::Span<uint8_t> mask) {
  size_t position = 0;
  uint8_t value = 0;
  for (uint32_t run : runs) {
    if (run > mask.size() - position) {
      return absl::InvalidArgumentError(
          absl::StrCat("runs cover more than the mask's ", mask.size(), " pixels"));
    }
    std::memset(mask.data() + position, value, run);
    position += run;
    value ^= 1;
  }
  if (position != mask.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("runs cover ", position, " of the mask's ", mask.size(), " pixels"));
  }
  return absl::OkStatus();
}

}  // namespace stoker
